/*
 * trace.c - the event trace, and its JSON and SVG timelines.
 *
 * Rule kept here: an event is stamped with a logical sequence number taken
 * under the trace lock, and carries names, never addresses or clock times,
 * so the same deterministic run yields the same bytes. Each CPU's ring keeps
 * its last TRACE_RING_SIZE events; the off-CPU lane (the test's controller)
 * is one more ring.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

struct trace_ev {
	unsigned long seq;
	int cpu;
	int type;
	long arg;
	char task[TASK_COMM_LEN];
	char name[32];
};

struct ring {
	struct trace_ev *ev;
	unsigned long len; /* events ever recorded here */
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ring *rings;
static int nr_rings;
static unsigned long next_seq;
static long counts[TR_NR_TYPES];

/* Set by the test harness: how to replay the current run, and a file tag. */
char sim_replay_cmd[1024];
char sim_failure_tag[256];

static const char *const type_names[TR_NR_TYPES] = {
	"switch", "idle", "read_lock", "read_unlock", "gp_start", "gp_end",
	"cb_queue", "cb_invoke", "irq_enter", "irq_exit", "ipi_send",
	"module_load", "module_unload", "bug", "warn", "mark", "hold",
};

void trace_free(void)
{
	pthread_mutex_lock(&trace_lock);
	for (int i = 0; i < nr_rings; i++)
		free(rings[i].ev);
	free(rings);
	rings = NULL;
	nr_rings = 0;
	pthread_mutex_unlock(&trace_lock);
}

void trace_reset(int nr_cpus)
{
	trace_free();
	pthread_mutex_lock(&trace_lock);
	nr_rings = nr_cpus + 1;
	rings = calloc((size_t)nr_rings, sizeof(*rings));
	for (int i = 0; rings && i < nr_rings; i++)
		rings[i].ev = calloc(TRACE_RING_SIZE, sizeof(struct trace_ev));
	next_seq = 0;
	memset(counts, 0, sizeof(counts));
	pthread_mutex_unlock(&trace_lock);
}

void trace_emit(int cpu, const struct task_struct *t, enum trace_type type,
		const char *name, long arg)
{
	if (!S.cfg.trace || !rings)
		return;
	pthread_mutex_lock(&trace_lock);
	if (rings) {
		int r = (cpu >= 0 && cpu < nr_rings - 1) ? cpu : nr_rings - 1;
		struct ring *ring = &rings[r];
		struct trace_ev *e = &ring->ev[ring->len++ % TRACE_RING_SIZE];

		e->seq = next_seq++;
		e->cpu = r == nr_rings - 1 ? -1 : r;
		e->type = type;
		e->arg = arg;
		snprintf(e->task, sizeof(e->task), "%s", t ? t->comm : "-");
		snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
		counts[type]++;
	}
	pthread_mutex_unlock(&trace_lock);
}

void trace_event(enum trace_type type, const char *name, long arg)
{
	struct task_struct *t = sim_current;

	trace_emit(t ? t->cpu : -1, t, type, name, arg);
}

void trace_mark(const char *fmt, ...)
{
	char buf[32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	trace_event(TR_MARK, buf, 0);
}

void trace_rcu_gp(int start, unsigned long gp_seq)
{
	trace_event(start ? TR_GP_START : TR_GP_END, start ? "gp start" : "gp end",
		    (long)gp_seq);
}

void trace_rcu_callback_queued(void (*func)(void *))
{
	(void)func;
	trace_event(TR_CB_QUEUE, "call_rcu", 0);
}

long trace_count(enum trace_type type)
{
	pthread_mutex_lock(&trace_lock);
	long n = counts[type];

	pthread_mutex_unlock(&trace_lock);
	return n;
}

/* All kept events, merged by sequence number. Caller frees. */
static struct trace_ev *trace_collect(size_t *n)
{
	pthread_mutex_lock(&trace_lock);
	size_t total = 0;

	for (int i = 0; i < nr_rings; i++)
		total += rings[i].len < TRACE_RING_SIZE ? rings[i].len : TRACE_RING_SIZE;
	struct trace_ev *all = malloc((total ? total : 1) * sizeof(*all));
	size_t k = 0;

	for (int i = 0; all && i < nr_rings; i++) {
		unsigned long len = rings[i].len, first = len > TRACE_RING_SIZE ? len - TRACE_RING_SIZE : 0;

		for (unsigned long j = first; j < len; j++)
			all[k++] = rings[i].ev[j % TRACE_RING_SIZE];
	}
	pthread_mutex_unlock(&trace_lock);
	/* insertion-merge: rings are each sorted, total is small */
	for (size_t i = 1; all && i < k; i++) {
		struct trace_ev e = all[i];
		size_t j = i;

		while (j > 0 && all[j - 1].seq > e.seq) {
			all[j] = all[j - 1];
			j--;
		}
		all[j] = e;
	}
	*n = k;
	return all;
}

int trace_write_text(FILE *f)
{
	size_t n;
	struct trace_ev *ev = trace_collect(&n);

	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%6lu cpu%-2d %-16s %-13s %s %ld\n", ev[i].seq, ev[i].cpu,
			ev[i].task, type_names[ev[i].type], ev[i].name, ev[i].arg);
	free(ev);
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

int trace_write_json(const char *path)
{
	size_t n;
	struct trace_ev *ev = trace_collect(&n);
	FILE *f = fopen(path, "w");

	if (!ev || !f) {
		free(ev);
		if (f)
			fclose(f);
		return -errno;
	}
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
		"\"args\":{\"name\":\"simulated kernel (logical time)\"}}");
	for (int c = -1; c < nr_rings - 1; c++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,"
			"\"args\":{\"name\":\"%s%d\"}}", c + 1, c < 0 ? "off-CPU " : "CPU ",
			c < 0 ? 0 : c);
	for (size_t i = 0; i < n; i++) {
		const struct trace_ev *e = &ev[i];
		const char *ph = "i";

		switch (e->type) {
		case TR_IRQ_ENTER: case TR_READ_LOCK: ph = "B"; break;
		case TR_IRQ_EXIT: case TR_READ_UNLOCK: ph = "E"; break;
		case TR_GP_START: ph = "b"; break;
		case TR_GP_END: ph = "e"; break;
		default: break;
		}
		fprintf(f, ",\n{\"name\":");
		json_str(f, e->type == TR_READ_LOCK || e->type == TR_READ_UNLOCK
			 ? "RCU read-side" : e->type == TR_GP_START || e->type == TR_GP_END
			 ? "grace period" : e->name);
		fprintf(f, ",\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":%lu,\"pid\":1,\"tid\":%d",
			type_names[e->type], ph, e->seq, e->cpu + 1);
		if (*ph == 'b' || *ph == 'e')
			fprintf(f, ",\"id\":%ld", e->arg);
		if (*ph == 'i')
			fprintf(f, ",\"s\":\"t\"");
		fprintf(f, ",\"args\":{\"task\":");
		json_str(f, e->task);
		fprintf(f, ",\"arg\":%ld}}", e->arg);
	}
	fprintf(f, "\n]}\n");
	free(ev);
	return fclose(f) ? -errno : 0;
}

static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

#define SVG_LANE 56
#define SVG_LEFT 110
#define SVG_WIDTH 1200

int trace_write_svg(const char *path, const char *title)
{
	size_t n;
	struct trace_ev *ev = trace_collect(&n);
	FILE *f = fopen(path, "w");

	if (!ev || !f) {
		free(ev);
		if (f)
			fclose(f);
		return -errno;
	}
	int cpus = nr_rings - 1, lanes = cpus + 2; /* CPUs, off-CPU, grace periods */
	unsigned long t0 = n ? ev[0].seq : 0, t1 = n ? ev[n - 1].seq + 1 : 1;
	double scale = (double)(SVG_WIDTH - SVG_LEFT - 20) / (double)(t1 - t0);
	int height = 60 + lanes * SVG_LANE + 40;

#define X(seq) (SVG_LEFT + ((double)((seq) - t0)) * scale)
#define Y(lane) (50 + (lane) * SVG_LANE)
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n", SVG_WIDTH, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">");
	svg_text(f, title ? title : "simulated kernel trace");
	fprintf(f, "</text>\n<text x=\"10\" y=\"36\" fill=\"#555\">logical time &#8594; "
		"(events %lu..%lu); boxes: task on CPU; red: IRQ; green: RCU reader; "
		"blue: grace period; &#9650; callback queued; &#9679; callback invoked</text>\n",
		t0, t1 - 1);
	for (int l = 0; l < lanes; l++) {
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n",
			SVG_LEFT, Y(l) + SVG_LANE - 4, SVG_WIDTH - 10, Y(l) + SVG_LANE - 4);
		if (l < cpus)
			fprintf(f, "<text x=\"10\" y=\"%d\">CPU %d</text>\n", Y(l) + 24, l);
		else
			fprintf(f, "<text x=\"10\" y=\"%d\">%s</text>\n", Y(l) + 24,
				l == cpus ? "off-CPU" : "grace periods");
	}
	/* open spans, per lane */
	unsigned long *task_from = calloc((size_t)nr_rings, sizeof(long));
	unsigned long *irq_from = calloc((size_t)nr_rings, sizeof(long));
	unsigned long *rd_from = calloc((size_t)nr_rings, sizeof(long));
	char (*task_name)[TASK_COMM_LEN] = calloc((size_t)nr_rings, TASK_COMM_LEN);
	unsigned long gp_from = 0;
	long gp_open = -1;

	for (size_t i = 0; task_from && irq_from && rd_from && task_name && i <= n; i++) {
		const struct trace_ev *e = i < n ? &ev[i] : NULL;
		int lane = e ? (e->cpu < 0 ? cpus : e->cpu) : 0;
		double x = e ? X(e->seq) : X(t1);

		/* close the task box of this lane (or of all lanes at the end) */
		for (int l = 0; l < nr_rings; l++) {
			bool close = e ? (l == lane && (e->type == TR_SWITCH || e->type == TR_IDLE))
				       : true;

			if (!close || !task_name[l][0])
				continue;
			double x0 = X(task_from[l]), w = (e ? x : X(t1)) - x0;

			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"18\" "
				"fill=\"#e8eef8\" stroke=\"#6a8cc7\"><title>", x0, Y(l) + 6, w > 1 ? w : 1);
			svg_text(f, task_name[l]);
			fprintf(f, "</title></rect>\n");
			if (w > 40) {
				fprintf(f, "<text x=\"%.1f\" y=\"%d\">", x0 + 3, Y(l) + 19);
				svg_text(f, task_name[l]);
				fprintf(f, "</text>\n");
			}
			task_name[l][0] = 0;
		}
		if (!e)
			break;
		int y = Y(lane);

		switch (e->type) {
		case TR_SWITCH:
			task_from[lane] = e->seq;
			snprintf(task_name[lane], TASK_COMM_LEN, "%.15s", e->name);
			break;
		case TR_IRQ_ENTER:
			irq_from[lane] = e->seq;
			break;
		case TR_IRQ_EXIT:
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"8\" fill=\"#d33\">"
				"<title>IRQ ", X(irq_from[lane]), y + 26, x - X(irq_from[lane]) + 1);
			svg_text(f, e->name);
			fprintf(f, "</title></rect>\n");
			break;
		case TR_READ_LOCK:
			rd_from[lane] = e->seq;
			break;
		case TR_READ_UNLOCK:
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"6\" fill=\"#2a2\">"
				"<title>RCU read-side critical section (%s)</title></rect>\n",
				X(rd_from[lane]), y + 36, x - X(rd_from[lane]) + 1, e->task);
			break;
		case TR_GP_START:
			gp_from = e->seq;
			gp_open = e->arg;
			break;
		case TR_GP_END:
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" "
				"fill=\"#5b8def\" opacity=\"0.8\"><title>grace period %ld</title></rect>\n"
				"<text x=\"%.1f\" y=\"%d\" fill=\"white\">GP %ld</text>\n",
				X(gp_from), Y(cpus + 1) + 8, x - X(gp_from) + 1, e->arg,
				X(gp_from) + 2, Y(cpus + 1) + 20, e->arg);
			gp_open = -1;
			break;
		case TR_CB_QUEUE:
			fprintf(f, "<path d=\"M%.1f %d l-4 7 h8 z\" fill=\"#a60\"><title>", x, y + 44);
			svg_text(f, e->name);
			fprintf(f, " queued by %s</title></path>\n", e->task);
			break;
		case TR_CB_INVOKE:
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%d\" r=\"4\" fill=\"#a60\"><title>"
				"invoked ", x, y + 48);
			svg_text(f, e->name);
			fprintf(f, "</title></circle>\n");
			break;
		case TR_BUG: case TR_WARN: case TR_MARK: case TR_MODULE_LOAD:
		case TR_MODULE_UNLOAD: case TR_HOLD: {
			const char *col = e->type == TR_BUG ? "#c00" : e->type == TR_WARN ? "#e80"
					: e->type == TR_HOLD ? "#888" : "#333";

			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
				"stroke-dasharray=\"3,2\"/>\n<text x=\"%.1f\" y=\"%d\" fill=\"%s\">",
				x, y + 2, x, y + SVG_LANE - 6, col, x + 2, y + 4, col);
			svg_text(f, type_names[e->type]);
			fputs(": ", f);
			svg_text(f, e->name);
			fprintf(f, "</text>\n");
			break;
		}
		default:
			break;
		}
	}
	if (gp_open >= 0)
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#5b8def\" "
			"opacity=\"0.4\"><title>grace period %ld (not ended)</title></rect>\n",
			X(gp_from), Y(cpus + 1) + 8, X(t1) - X(gp_from), gp_open);
	fprintf(f, "</svg>\n");
	free(task_from);
	free(irq_from);
	free(rd_from);
	free(task_name);
	free(ev);
	return fclose(f) ? -errno : 0;
#undef X
#undef Y
}

/* On any failure: how to see it again. Never takes S.lock. */
void sim_failure_report(const char *why)
{
	const char *dir = getenv("WORKBOOK_TRACE_DIR");
	char path[1200];

	if (S.ever_booted)
		fprintf(stderr, "  seed: %llu (%s mode)\n", (unsigned long long)S.cfg.seed,
			S.cfg.mode == SIM_PARALLEL ? "parallel" : "deterministic");
	if (sim_replay_cmd[0] && S.ever_booted)
		fprintf(stderr, "  replay: %sWORKBOOK_SEED=%llu %s\n", explore_replay_env(),
			(unsigned long long)S.cfg.seed, sim_replay_cmd);
	else if (sim_replay_cmd[0])
		fprintf(stderr, "  rerun: %s\n", sim_replay_cmd);
	if (!rings)
		return;
	if (!dir || !*dir)
		dir = "traces";
	mkdir(dir, 0777);
	if (sim_failure_tag[0])
		snprintf(path, sizeof(path), "%s/%s-seed%llu.svg", dir, sim_failure_tag,
			 (unsigned long long)S.cfg.seed);
	else
		snprintf(path, sizeof(path), "%s/failure-%d.svg", dir, (int)getpid());
	if (trace_write_svg(path, why) == 0)
		fprintf(stderr, "  timeline: %s\n", path);
}
