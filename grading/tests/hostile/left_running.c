
/* hostile: leave a detached process running after grading. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void hostile_left_running(void)
{
	if (getenv("BXFI_MAP"))             /* once, from Criterion's runner */
		return;
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			fprintf(stderr, "hostile: detached process %d started\n", (int)getpid());
			execl("/bin/sleep", "@MARK@", "600", (char *)NULL);
			_exit(1);
		}
		_exit(0);
	}
}
