/*
 * json_str.h - one JSON string writer for the trace (trace.c) and the
 * Criterion shim's report (shim/criterion_shim.c), which link apart.
 *
 * Rule kept here: the string is written quoted, with the quote and the
 * backslash escaped and every control byte as a \\u escape, so any name a
 * test gives stays valid JSON.
 */
#ifndef SIM_JSON_STR_H
#define SIM_JSON_STR_H

#include <stdio.h>

static inline void json_str(FILE *f, const char *s)
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

#endif
