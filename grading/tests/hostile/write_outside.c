
/* hostile: write files outside the submission's folder, read another slot's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void hostile_try_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	fprintf(stderr, "hostile: write %s: %s\n", path, fd >= 0 ? "WRITTEN" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

__attribute__((constructor)) static void hostile_write_outside(void)
{
	char exe[512] = "", path[700];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0)
		exe[n] = 0;
	hostile_try_write("@ROOT@/labs/HOSTILE-@MARK@");
	hostile_try_write("@ROOT@/HOSTILE-@MARK@");
	snprintf(path, sizeof(path), "%s.HOSTILE-@MARK@", exe);   /* beside the binary */
	hostile_try_write(path);
	hostile_try_write("/tmp/HOSTILE-@MARK@");
	hostile_try_write("/var/tmp/HOSTILE-@MARK@");
	hostile_try_write("/dev/shm/HOSTILE-@MARK@");
	/* another grading slot's submission (containment grades on slots 0, 1) */
	int fd = open("@ROOT@/build-wb-grade-own-1/impl/01-synchronize-rcu/rcu.c", O_RDONLY);

	fprintf(stderr, "hostile: read slot 1's submission: %s\n", fd >= 0 ? "READ" : strerror(errno));
}
