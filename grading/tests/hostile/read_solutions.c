
/* hostile: read the reference solution, the quizzes' answers and the
 * instructors' notes, and print them into the test output. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void hostile_try_read(const char *path)
{
	char line[200] = "";
	FILE *f = fopen(path, "r");

	if (f && fgets(line, sizeof(line), f))
		fprintf(stderr, "hostile: read %s: READ '%.60s'\n", path, strtok(line, "\n"));
	else
		fprintf(stderr, "hostile: read %s: %s\n", path, f ? "empty" : strerror(errno));
	if (f)
		fclose(f);
}

__attribute__((constructor)) static void hostile_read_solutions(void)
{
	char exe[512] = "", path[700];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *cut;

	if (n > 0)
		exe[n] = 0;
	cut = strstr(exe, "/build-");       /* the workbook holds its build folders */
	if (cut) {
		*cut = 0;
		snprintf(path, sizeof(path), "%s/solutions/01-synchronize-rcu/rcu.c", exe);
		hostile_try_read(path);
	}
	hostile_try_read("@ROOT@/solutions/01-synchronize-rcu/rcu.c");
	hostile_try_read("@ROOT@/solutions/02-call-rcu/call_rcu.c");
	hostile_try_read("@ROOT@/quizzes/01-synchronize-rcu.md");
	hostile_try_read("@ROOT@/docs/instructors.md");
}
