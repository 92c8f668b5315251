/*
 * trace_svg.c - the trace drawn as a self-contained SVG timeline.
 *
 * Rule kept here: the drawing reads the collected events and nothing else
 * (no clock, no address), one lane per CPU, one for off-CPU tasks, one for
 * grace periods and, when the tests used SRCU, one for SRCU readers and
 * synchronize_srcu() calls; the same events always draw the same bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define SVG_LANE 56
#define SVG_LEFT 110
#define SVG_WIDTH 1200
#define SVG_RIGHT (SVG_WIDTH - 10)
#define SVG_CHAR 6.5     /* a generous width of one 11px sans-serif character */
#define SVG_CHAR_BOLD 7.2 /* the same, bold */
#define SVG_CAPTION 380.0 /* the widest caption beside the failure's red line */
#define SVG_ROWS 3       /* label rows per lane before a label is shortened */
#define SVG_SRCU_OPEN 16 /* SRCU readers and grace periods open at once, at most */
#define SVG_SRCU_READER_ROWS 3
#define SVG_FAIL_LINES 6 /* lines of the header's failure text, at most */
#define SVG_SRCU_ROWS 5  /* rows 0-2: readers; 3-4: synchronize_srcu() */

/* An SRCU reader or synchronize_srcu() call still open, per task. */
struct svg_srcu {
	bool gp;
	int row;
	long idx;
	unsigned long from;
	char task[TASK_COMM_LEN];
	char dom[32];
};

/* The drawing's state: the time axis, and the spans still open per lane. */
struct svg {
	FILE *f;
	FILE *labels;               /* marks' labels, written last so that no box hides one */
	char *labels_buf;
	size_t labels_len;
	int cpus;                   /* lanes 0..cpus-1; cpus: off-CPU; cpus+1: grace periods */
	int nr_rings;
	unsigned long t0, t1;
	double scale;
	unsigned long *task_from, *irq_from, *rd_from;
	bool *rd_open, *irq_open;
	char (*rd_task)[TASK_COMM_LEN];
	double (*label_end)[SVG_ROWS];   /* per lane and label row: where the last label ends */
	char (*task_name)[TASK_COMM_LEN];
	unsigned long gp_from;
	long gp_open;
	int lanes;                  /* every lane, the SRCU lane included */
	int top;                    /* y of lane 0, below the failure's lines */
	char failure[SVG_FAIL_LINES][160]; /* "failed: ...", in lines that fit */
	int failure_lines;
	int srcu_lane;              /* -1: no SRCU event in the trace */
	struct svg_srcu srcu[SVG_SRCU_OPEN];
	int nr_srcu;
};

static double svg_x(const struct svg *s, unsigned long seq)
{
	return SVG_LEFT + ((double)(seq - s->t0)) * s->scale;
}

static int svg_y(const struct svg *s, int lane)
{
	return s->top + lane * SVG_LANE;
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

/* How many characters of text drawn with ATTRS fit in WIDTH pixels. */
static size_t svg_fits(double width, const char *attrs)
{
	double w = attrs && strstr(attrs, "bold") ? SVG_CHAR_BOLD : SVG_CHAR;

	return width > w ? (size_t)(width / w) : 0;
}

/*
 * TEXT at (x, y), cut to fit WIDTH pixels: a shortened label ends in an
 * ellipsis and carries the full text as a tooltip (<title>), so nothing is
 * cut at the right edge or drawn over its neighbour without a way to read it.
 */
static void svg_fit_text(FILE *f, double x, int y, double width, const char *attrs,
			 const char *text)
{
	size_t fits = svg_fits(width, attrs);
	size_t len = strlen(text);

	if (fits < 2)
		return;
	fprintf(f, "<text x=\"%.1f\" y=\"%d\"%s%s>", x, y, attrs ? " " : "", attrs ? attrs : "");
	if (len <= fits) {
		svg_text(f, text);
	} else {
		char cut[512];

		snprintf(cut, sizeof(cut), "%.*s", (int)(fits - 1), text);
		svg_text(f, cut);
		fputs("&#8230;<title>", f);
		svg_text(f, text);
		fputs("</title>", f);
	}
	fputs("</text>\n", f);
}

/* The workbook's top folders: a path is shown from the last one in it. */
static const char *const svg_tree_dirs[] = { "/labs/", "/solutions/", "/common/" };

/*
 * Where the absolute path PATH (LEN bytes) is best shown from: from the
 * workbook's own folder in it (".../labs/02-call-rcu/call_rcu.c:140" from
 * "labs/"), else its last two parts. The tree is found by name, so a
 * submission graded in a copy elsewhere is shown the same way.
 */
static const char *svg_path_tail(const char *path, size_t len)
{
	const char *best = NULL, *slash = NULL, *before = NULL;

	for (size_t d = 0; d < sizeof(svg_tree_dirs) / sizeof(svg_tree_dirs[0]); d++) {
		size_t dl = strlen(svg_tree_dirs[d]);

		for (const char *p = path; p + dl <= path + len; p++)
			if (!strncmp(p, svg_tree_dirs[d], dl) && (!best || p > best))
				best = p;
	}
	if (best)
		return best + 1;
	for (const char *p = path; p < path + len; p++)
		if (*p == '/') {
			before = slash;
			slash = p;
		}
	return (before ? before : slash) + 1;
}

/*
 * MSG (a failure's message) as a picture shows it, into OUT: each absolute
 * path shortened by svg_path_tail(), line breaks made spaces; with
 * FIRST_LINE, only what comes before the first line break.
 */
static void svg_failure_text(char *out, size_t n, const char *msg, bool first_line)
{
	size_t o = 0;

	for (const char *m = msg; *m && o + 1 < n; ) {
		if (*m == '\n' && first_line)
			break;
		if (*m == '/' && (m == msg || m[-1] == ' ' || m[-1] == '(')) {
			size_t len = strcspn(m, " \n;,)");
			const char *tail = svg_path_tail(m, len);
			size_t keep = (size_t)(m + len - tail);

			if (keep > n - 1 - o)
				keep = n - 1 - o;
			memcpy(out + o, tail, keep);
			o += keep;
			m += len;
			continue;
		}
		out[o++] = *m == '\n' ? ' ' : *m;
		m++;
	}
	out[o] = '\0';
}

/*
 * The failure, "failed: ...", in lines of at most WIDTH pixels of bold
 * text, broken at spaces: the whole of it, as check prints it, and the
 * lanes moved down to make room. Only what SVG_FAIL_LINES cannot hold is
 * cut (with an ellipsis; hovering shows the whole text).
 */
static void svg_failure_lines(struct svg *s, double width)
{
	char what[600];
	size_t fits = svg_fits(width, "bold"), len;
	const char *p = what;

	if (fits >= sizeof(s->failure[0]))
		fits = sizeof(s->failure[0]) - 1;
	strcpy(what, "failed: ");
	svg_failure_text(what + 8, sizeof(what) - 8, sim_failure_what, false);
	while (*p && s->failure_lines < SVG_FAIL_LINES) {
		char *line = s->failure[s->failure_lines++];

		len = strlen(p);
		if (len > fits) {
			len = fits;
			while (len > fits / 2 && p[len] != ' ')
				len--;
		}
		if (s->failure_lines == SVG_FAIL_LINES && p[len]) {
			snprintf(line, sizeof(s->failure[0]), "%.*s\u2026",
				 (int)(len < fits - 1 ? len : fits - 1), p);
			break;
		}
		snprintf(line, sizeof(s->failure[0]), "%.*s", (int)len, p);
		p += len;
		while (*p == ' ')
			p++;
	}
	if (s->failure_lines > 2)
		s->top += 12 * (s->failure_lines - 2);
}

/*
 * A barrier's marker (rcu_barrier_callback(), srcu_barrier_cb(), a
 * torture's barrier check) is drawn apart from the callbacks it waits
 * behind: every lab names its marker's function after the barrier.
 */
static bool svg_cb_is_marker(const char *name)
{
	return name && strstr(name, "barrier");
}

static const char *svg_cb_colour(const char *name)
{
	return svg_cb_is_marker(name) ? "#0a9" : "#a60";
}

static const char *svg_cb_kind(const char *name)
{
	return svg_cb_is_marker(name) ? "barrier marker " : "";
}

static void svg_header(const struct svg *s, const char *title)
{
	FILE *f = s->f;
	int lanes = s->lanes;

	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n", SVG_WIDTH,
		svg_y(s, lanes) + 20);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">");
	svg_text(f, title ? title : "simulated kernel trace");
	fprintf(f, "</text>\n<text x=\"10\" y=\"36\" fill=\"#555\">logical time &#8594; "
		"(events %lu..%lu); boxes: task on CPU; red: IRQ; green: RCU reader; "
		"blue: grace period; &#9650; callback queued; &#9679; callback invoked "
		"(teal: a barrier's marker); "
		"red line: the failure</text>\n", s->t0, s->t1 - 1);
	if (s->failure_lines) {
		fputs("<g fill=\"#c00\" font-weight=\"bold\"><title>", f);
		svg_text(f, sim_failure_what);
		fputs("</title>\n", f);
		for (int i = 0; i < s->failure_lines; i++) {
			fprintf(f, "<text x=\"10\" y=\"%d\">", 50 + 12 * i);
			svg_text(f, s->failure[i]);
			fputs("</text>\n", f);
		}
		fputs("</g>\n", f);
	}
	for (int l = 0; l < lanes; l++) {
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n",
			SVG_LEFT, svg_y(s, l) + SVG_LANE - 4, SVG_WIDTH - 10, svg_y(s, l) + SVG_LANE - 4);
		if (l < s->cpus)
			fprintf(f, "<text x=\"10\" y=\"%d\">CPU %d</text>\n", svg_y(s, l) + 24, l);
		else if (l == s->srcu_lane)
			fprintf(f, "<text x=\"10\" y=\"%d\">SRCU</text>\n<text x=\"10\" y=\"%d\" "
				"font-size=\"9\" fill=\"#2a2\">green: readers</text>\n<text x=\"10\" "
				"y=\"%d\" font-size=\"9\" fill=\"#8a4fd8\">purple: calls of</text>\n"
				"<text x=\"10\" y=\"%d\" font-size=\"9\" fill=\"#8a4fd8\">"
				"synchronize_srcu()</text>\n", svg_y(s, l) + 14, svg_y(s, l) + 26, svg_y(s, l) + 37,
				svg_y(s, l) + 47);
		else
			fprintf(f, "<text x=\"10\" y=\"%d\">%s</text>\n", svg_y(s, l) + 24,
				l == s->cpus ? "off-CPU" : "grace periods");
	}
}

/* The box of the task that held lane l, from its switch-in to x_end. */
static void svg_task_box(struct svg *s, int l, double x_end)
{
	FILE *f = s->f;
	double x0 = svg_x(s, s->task_from[l]), w = x_end - x0;

	fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"18\" "
		"fill=\"#e8eef8\" stroke=\"#6a8cc7\"><title>", x0, svg_y(s, l) + 6, w > 1 ? w : 1);
	svg_text(f, s->task_name[l]);
	fprintf(f, "</title></rect>\n");
	svg_fit_text(f, x0 + 3, svg_y(s, l) + 19, w - 6, NULL, s->task_name[l]);
	s->task_name[l][0] = 0;
}

/* A switch or idle event ends its lane's box; the end of the trace (e NULL) ends all. */
static void svg_close_boxes(struct svg *s, const struct trace_ev *e, int lane)
{
	for (int l = 0; l < s->nr_rings; l++) {
		bool close = e ? (l == lane && (e->type == TR_SWITCH || e->type == TR_IDLE))
			       : true;

		if (close && s->task_name[l][0])
			svg_task_box(s, l, e ? svg_x(s, e->seq) : svg_x(s, s->t1));
	}
}

static void svg_gp_end(struct svg *s, const struct trace_ev *e, double x)
{
	int y = svg_y(s, s->cpus + 1);

	fprintf(s->f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" "
		"fill=\"#5b8def\" opacity=\"0.8\"><title>grace period %ld</title></rect>\n",
		svg_x(s, s->gp_from), y + 8, x - svg_x(s, s->gp_from) + 1, e->arg);
	char gp[32];

	snprintf(gp, sizeof(gp), "GP %ld", e->arg);
	svg_fit_text(s->f, svg_x(s, s->gp_from) + 2, y + 20, x - svg_x(s, s->gp_from) - 2,
		     "fill=\"white\"", gp);
	s->gp_open = -1;
}

/* The first label row of LANE free at X (or the last row, shortened). */
static int svg_label_row(struct svg *s, int lane, double x)
{
	for (int r = 0; r < SVG_ROWS; r++)
		if (s->label_end[lane][r] <= x)
			return r;
	return SVG_ROWS - 1;
}

/*
 * The failure (a BUG, or a failed assertion: the harness emits TR_BUG for
 * it): a red line through every lane at the moment the test failed, with
 * the whole message (paths shortened) as its tooltip, and a caption above
 * the lanes beside it, on the side with room, at most SVG_CAPTION pixels
 * wide: the header above holds the whole message.
 */
static void svg_failure_mark(struct svg *s, const struct trace_ev *e, double x)
{
	const char *attrs = "fill=\"#c00\" font-weight=\"bold\"";
	/* the message itself: the event keeps only its first 31 characters */
	const char *msg = sim_failure_what[0] ? sim_failure_what : e->name;
	double right = SVG_RIGHT - (x + 2), left = x - 4 - SVG_LEFT, want, room;
	int y = svg_y(s, 0) - 9;
	char text[600];

	svg_failure_text(text, sizeof(text), msg, false);
	fprintf(s->f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c00\" "
		"stroke-width=\"2\"><title>", x, svg_y(s, 0), x, svg_y(s, s->lanes) - 4);
	svg_text(s->f, text);
	fputs("</title></line>\n", s->f);

	strcpy(text, "FAILED: ");
	svg_failure_text(text + 8, sizeof(text) - 8, msg, true);
	want = (double)strlen(text) * SVG_CHAR_BOLD + 1;
	room = want < SVG_CAPTION ? want : SVG_CAPTION;
	if (room <= right)
		svg_fit_text(s->f, x + 2, y, room, attrs, text);
	else if (room <= left)
		svg_fit_text(s->f, x - 4 - room, y, room, attrs, text);
	else if (right >= left)
		svg_fit_text(s->f, x + 2, y, right, attrs, text);
	else
		svg_fit_text(s->f, SVG_LEFT, y, left, attrs, text);
}

/* A dashed line and a label: WARN, mark, module load/unload, hold. */
static void svg_marker(struct svg *s, const struct trace_ev *e, int lane, double x)
{
	FILE *f = s->f;
	int y = svg_y(s, lane);
	const char *col = e->type == TR_WARN ? "#e80" : e->type == TR_HOLD ? "#888" : "#333";
	char label[80];
	int row;

	fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
		"stroke-dasharray=\"3,2\"/>\n", x, y + 2, x, y + SVG_LANE - 6, col);
	snprintf(label, sizeof(label), "%s: %s", trace_type_name(e->type), e->name);
	double want = (double)strlen(label) * SVG_CHAR, start = x + 2;

	if (start + want > SVG_RIGHT)      /* no room on the right: end at the edge */
		start = SVG_RIGHT - want > SVG_LEFT ? SVG_RIGHT - want : SVG_LEFT;
	row = svg_label_row(s, lane, start);
	if (s->label_end[lane][row] > start)  /* every row taken: shorten the label */
		start = s->label_end[lane][row];
	svg_fit_text(s->labels ? s->labels : f, start, y + 4 + 10 * row, SVG_RIGHT - start,
		     col[1] == '8' ? "fill=\"#888\"" : col[1] == 'e' ? "fill=\"#e80\"" :
		     "fill=\"#333\"", label);
	s->label_end[lane][row] = start + want + 4;
}

/* The spans that end at e (IRQ, reader) and the marks drawn at its time. */
static void svg_span_or_mark(struct svg *s, const struct trace_ev *e, int lane, double x)
{
	FILE *f = s->f;
	int y = svg_y(s, lane);

	switch (e->type) {
	case TR_IRQ_EXIT:
		s->irq_open[lane] = false;
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"8\" fill=\"#d33\">"
			"<title>IRQ ", svg_x(s, s->irq_from[lane]), y + 26,
			x - svg_x(s, s->irq_from[lane]) + 1);
		svg_text(f, e->name);
		fprintf(f, "</title></rect>\n");
		break;
	case TR_READ_UNLOCK:
		s->rd_open[lane] = false;
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"6\" fill=\"#2a2\">"
			"<title>RCU read-side critical section (%s)</title></rect>\n",
			svg_x(s, s->rd_from[lane]), y + 36, x - svg_x(s, s->rd_from[lane]) + 1, e->task);
		break;
	case TR_CB_QUEUE:
		fprintf(f, "<path d=\"M%.1f %d l-4 7 h8 z\" fill=\"%s\"><title>%s", x, y + 44,
			svg_cb_colour(e->name), svg_cb_kind(e->name));
		svg_text(f, e->name);
		fprintf(f, " queued by %s</title></path>\n", e->task);
		break;
	case TR_CB_INVOKE:
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%d\" r=\"4\" fill=\"%s\"><title>"
			"invoked %s", x, y + 48, svg_cb_colour(e->name), svg_cb_kind(e->name));
		svg_text(f, e->name);
		fprintf(f, "</title></circle>\n");
		break;
	case TR_BUG:
		svg_failure_mark(s, e, x);
		break;
	case TR_WARN: case TR_MARK: case TR_MODULE_LOAD: case TR_MODULE_UNLOAD: case TR_HOLD:
		svg_marker(s, e, lane, x);
		break;
	default:
		break;
	}
}

/* ---- SRCU: spans per task, in a lane of their own ----------------------- */

static int svg_srcu_row(const struct svg *s, bool gp)
{
	int first = gp ? SVG_SRCU_READER_ROWS : 0, last = gp ? SVG_SRCU_ROWS : SVG_SRCU_READER_ROWS;

	for (int r = first; r < last; r++) {
		bool taken = false;

		for (int i = 0; i < s->nr_srcu; i++)
			taken |= s->srcu[i].row == r;
		if (!taken)
			return r;
	}
	return last - 1;
}

static void svg_srcu_open(struct svg *s, const struct trace_ev *e)
{
	struct svg_srcu *o;

	if (s->nr_srcu == SVG_SRCU_OPEN)
		return;
	o = &s->srcu[s->nr_srcu];
	o->gp = e->type == TR_SRCU_GP_START;
	o->row = svg_srcu_row(s, o->gp);
	o->idx = e->arg;
	o->from = e->seq;
	snprintf(o->task, sizeof(o->task), "%.15s", e->task);
	snprintf(o->dom, sizeof(o->dom), "%.31s", e->name);
	s->nr_srcu++;
}

/* One SRCU span from its start to X: still open at the trace's end if OPEN. */
static void svg_srcu_span(struct svg *s, const struct svg_srcu *o, double x, bool open)
{
	int y = svg_y(s, s->srcu_lane) + 4 + o->row * 10;
	double x0 = svg_x(s, o->from), w = x - x0 + 1;
	char label[80];

	fprintf(s->f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"%s\"%s><title>",
		x0, y, w, o->gp ? "#8a4fd8" : "#2a2",
		open ? " stroke=\"#333\" stroke-dasharray=\"2,1\" opacity=\"0.6\"" : "");
	if (o->gp)
		fprintf(s->f, "synchronize_srcu(%s) by ", o->dom);
	else
		fprintf(s->f, "SRCU reader of %s, index %ld: ", o->dom, o->idx);
	svg_text(s->f, o->task);
	fputs(open ? (o->gp ? ", not returned when the trace ends" : ", still inside when the trace ends")
		   : "", s->f);
	fputs("</title></rect>\n", s->f);
	if (o->gp)
		snprintf(label, sizeof(label), "%s: synchronize_srcu(%s)%s", o->task, o->dom,
			 open ? " not returned" : "");
	else
		snprintf(label, sizeof(label), "%s: %s, index %ld%s", o->task, o->dom, o->idx,
			 open ? " still inside" : "");
	/* a span too short for its label gets it beside, in its colour */
	if ((double)strlen(label) * SVG_CHAR * 0.85 <= w - 3)
		svg_fit_text(s->f, x0 + 2, y + 8, w - 3, "fill=\"white\" font-size=\"9\"", label);
	else
		svg_fit_text(s->f, x0 + w + 2, y + 8, SVG_RIGHT - (x0 + w + 2),
			     o->gp ? "fill=\"#8a4fd8\" font-size=\"9\"" : "fill=\"#2a2\" font-size=\"9\"",
			     label);
}

/* The span this event ends: the same task's, of the same kind and domain. */
static void svg_srcu_close(struct svg *s, const struct trace_ev *e, double x)
{
	bool gp = e->type == TR_SRCU_GP_END;

	for (int i = s->nr_srcu - 1; i >= 0; i--) {
		struct svg_srcu *o = &s->srcu[i];

		if (o->gp != gp || strcmp(o->task, e->task) || strcmp(o->dom, e->name))
			continue;
		svg_srcu_span(s, o, x, false);
		s->srcu[i] = s->srcu[--s->nr_srcu];
		return;
	}
}

/* One event: open the span it starts, or draw what it ends or marks. */
static void svg_event(struct svg *s, const struct trace_ev *e)
{
	int lane = e->cpu < 0 ? s->cpus : e->cpu;

	svg_close_boxes(s, e, lane);
	switch (e->type) {
	case TR_SWITCH:
		s->task_from[lane] = e->seq;
		snprintf(s->task_name[lane], TASK_COMM_LEN, "%.15s", e->name);
		break;
	case TR_IRQ_ENTER:
		s->irq_from[lane] = e->seq;
		s->irq_open[lane] = true;
		break;
	case TR_READ_LOCK:
		s->rd_from[lane] = e->seq;
		s->rd_open[lane] = true;
		snprintf(s->rd_task[lane], TASK_COMM_LEN, "%.15s", e->task);
		break;
	case TR_GP_START:
		s->gp_from = e->seq;
		s->gp_open = e->arg;
		break;
	case TR_GP_END:
		svg_gp_end(s, e, svg_x(s, e->seq));
		break;
	case TR_SRCU_LOCK: case TR_SRCU_GP_START:
		svg_srcu_open(s, e);
		break;
	case TR_SRCU_UNLOCK: case TR_SRCU_GP_END:
		svg_srcu_close(s, e, svg_x(s, e->seq));
		break;
	default:
		svg_span_or_mark(s, e, lane, svg_x(s, e->seq));
		break;
	}
}

/*
 * Spans still open when the trace stops are drawn to its end: the reader a
 * failure is about is often the one that never left (outlined, labelled).
 */
static void svg_open_spans(struct svg *s)
{
	FILE *f = s->f;
	double end = svg_x(s, s->t1);

	for (int l = 0; l < s->nr_rings; l++) {
		int y = svg_y(s, l);

		if (s->irq_open[l])
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"8\" "
				"fill=\"#d33\" opacity=\"0.6\"><title>IRQ handler still running "
				"when the trace ends</title></rect>\n", svg_x(s, s->irq_from[l]),
				y + 26, end - svg_x(s, s->irq_from[l]) + 1);
		if (!s->rd_open[l])
			continue;
		double x0 = svg_x(s, s->rd_from[l]);

		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"6\" fill=\"#2a2\" "
			"stroke=\"#060\" stroke-dasharray=\"2,1\"><title>RCU read-side critical "
			"section (", x0, y + 36, end - x0 + 1);
		svg_text(f, s->rd_task[l]);
		fputs(") still inside when the trace ends</title></rect>\n", f);
		svg_fit_text(f, x0 + 2, y + 52, end - x0 - 2, "fill=\"#060\"",
			     "reader still inside at the end");
	}
	for (int i = 0; i < s->nr_srcu; i++)
		svg_srcu_span(s, &s->srcu[i], end, true);
}

static void svg_footer(const struct svg *s)
{
	if (s->gp_open >= 0)
		fprintf(s->f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#5b8def\" "
			"opacity=\"0.4\"><title>grace period %ld (not ended)</title></rect>\n",
			svg_x(s, s->gp_from), svg_y(s, s->cpus + 1) + 8,
			svg_x(s, s->t1) - svg_x(s, s->gp_from), s->gp_open);
	fprintf(s->f, "</svg>\n");
}

int trace_write_svg(const char *path, const char *title)
{
	struct trace_dump d;
	int err = trace_dump_open(&d, path);

	if (err)
		return err;
	size_t nr = (size_t)d.nr_rings;
	struct svg s = {
		.f = d.f, .cpus = d.nr_rings - 1, .nr_rings = d.nr_rings,
		.t0 = d.n ? d.ev[0].seq : 0, .t1 = d.n ? d.ev[d.n - 1].seq + 1 : 1,
		.task_from = calloc(nr, sizeof(long)), .irq_from = calloc(nr, sizeof(long)),
		.rd_from = calloc(nr, sizeof(long)), .task_name = calloc(nr, TASK_COMM_LEN),
		.rd_open = calloc(nr, sizeof(bool)), .irq_open = calloc(nr, sizeof(bool)),
		.rd_task = calloc(nr, TASK_COMM_LEN), .label_end = calloc(nr, sizeof(double[SVG_ROWS])),
		.gp_open = -1, .srcu_lane = -1,
	};

	for (size_t i = 0; i < d.n && s.srcu_lane < 0; i++)
		if (d.ev[i].type >= TR_SRCU_LOCK && d.ev[i].type <= TR_SRCU_GP_END)
			s.srcu_lane = s.cpus + 2;
	s.lanes = s.cpus + 2 + (s.srcu_lane >= 0);

	s.scale = (double)(SVG_WIDTH - SVG_LEFT - 20) / (double)(s.t1 - s.t0);
	s.top = 84;
	if (sim_failure_what[0])
		svg_failure_lines(&s, (SVG_RIGHT - 10) * 0.85);
	s.labels = open_memstream(&s.labels_buf, &s.labels_len);
	svg_header(&s, title);
	if (s.task_from && s.irq_from && s.rd_from && s.task_name && s.rd_open && s.irq_open &&
	    s.rd_task && s.label_end) {
		for (size_t i = 0; i < d.n; i++)
			svg_event(&s, &d.ev[i]);
		svg_close_boxes(&s, NULL, 0);
		svg_open_spans(&s);
	}
	if (s.labels && fclose(s.labels) == 0)
		fwrite(s.labels_buf, 1, s.labels_len, s.f);
	free(s.labels_buf);
	svg_footer(&s);
	free(s.task_from);
	free(s.irq_from);
	free(s.rd_from);
	free(s.task_name);
	free(s.rd_open);
	free(s.irq_open);
	free(s.rd_task);
	free(s.label_end);
	return trace_dump_close(&d);
}
