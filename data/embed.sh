#!/bin/sh
# Writes a text file as a C string constant: embed.sh NAME FILE > out.c
# (the built-in price table is compiled in from data/prices.conf).
set -eu
name=$1
file=$2
printf '/* Generated from %s by data/embed.sh; do not edit. */\n' "$file"
printf 'extern const char %s[];\nconst char %s[] =\n' "$name" "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/        "/' -e 's/$/\\n"/' "$file"
printf '        "";\n'
