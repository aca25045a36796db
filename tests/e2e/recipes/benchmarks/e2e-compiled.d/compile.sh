#!/bin/sh
# Runs as a build step of the e2e-compiled image: compiles the benchmark's "extension" (a
# shared library) and the program that loads it, with the build stage's gcc.
set -eu
cat > ext.c <<'C'
int probe_ext_answer(void) { return 42; }
C
cat > smoke.c <<'C'
#include <stdio.h>
int probe_ext_answer(void);
int main(void) {
    printf("e2e-compiled smoke: extension answers %d\n", probe_ext_answer());
    return probe_ext_answer() == 42 ? 0 : 1;
}
C
gcc -shared -fPIC -o libprobe_ext.so ext.c
gcc -o smoke smoke.c -L. -lprobe_ext -Wl,-rpath=/workspace/compiled
rm -f ext.c smoke.c
./smoke
