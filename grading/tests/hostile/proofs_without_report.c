/* hostile (round 4): proofs alone, no report. A constructor in Criterion's
 * runner (which holds the proof's nonce and path in its environment, to hand
 * them to its workers) writes a proof for every test of the lab, then keeps
 * the runner busy so that it never writes its report: the lab's budget ends
 * the run, and a grader that counted proofs without the runner's report gave
 * every point. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void hostile_proofs_only(void)
{
	const char *p = getenv("WORKBOOK_PROOF");
	char nonce[72] = "", path[512] = "", tests[] = "@TESTS@";

	if (!p || sscanf(p, "%71s %511s", nonce, path) != 2)
		return;
	int fd = open(path, O_WRONLY | O_APPEND);
	int n = 0;
	for (char *t = strtok(tests, " "); t; t = strtok(NULL, " "), n++)
		dprintf(fd, "%s %s end\n", t, nonce);
	printf("hostile: wrote %d proofs, no report will follow\n", n);
	fflush(stdout);
	for (volatile int spin = 1; spin;)
		;
}
