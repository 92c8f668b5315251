/* hostile (round 4): a constructor in Criterion's runner reads the proof's
 * nonce and path from its environment, writes a proof for every test of
 * every lab and exits before any test runs. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void hostile_forge(void)
{
	const char *p = getenv("WORKBOOK_PROOF");
	char nonce[72] = "", path[512] = "";

	if (!p || sscanf(p, "%71s %511s", nonce, path) != 2)
		return;
	int fd = open(path, O_WRONLY | O_APPEND);
	dprintf(fd, "rculist/add_and_walk %s end\n", nonce);
	printf("hostile: forged a proof\n");
	_exit(0);
}
