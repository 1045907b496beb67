/* Text from the ledger (models, projects, sessions, tools) made safe for an
 * HTML page: & < > " ' become entities, so a crafted name is shown as text
 * and can never open a tag, end an attribute or start a script. */
#pragma once

#include <stdio.h>

/* Writes s (NULL reads as "") escaped, for element text and quoted
 * attribute values alike. EOF on a write error, else 0. */
int html_escape(FILE *f, const char *s);
/* The same for the first n bytes of s. */
int html_escape_n(FILE *f, const char *s, size_t n);
