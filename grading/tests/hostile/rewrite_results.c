
/* hostile: a detached process rewrites the results after grading returns. */
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void hostile_rewrite_results(void)
{
	static const char loop[] =
		"seen=; for i in $(seq 6000); do"
		"  if printf '{\"score\": 400, \"tests\": []}\\n' 2>/dev/null > '@OUT@'; then"
		"    [ -n \"$seen\" ] || echo 'hostile: rewrote @OUT@' >&2; seen=1;"
		"  elif [ -z \"$seen\" ]; then echo 'hostile: rewrite @OUT@: failed' >&2; seen=1; fi;"
		"  sleep 0.1; done";

	if (getenv("BXFI_MAP") || fork() != 0)   /* once, from Criterion's runner */
		return;
	setsid();
	if (fork() == 0)
		execl("/bin/sh", "@MARK@", "-c", loop, (char *)NULL);
	_exit(0);
}
