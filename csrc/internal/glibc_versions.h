/* Old glibc symbol versions for the functions that glibc 2.34 moved from libpthread into libc.
 *
 * Linked against glibc 2.34 or later, a reference to pthread_create binds to its new version (GLIBC_2.34), and the
 * library then refuses to load on an older glibc. glibc keeps the old version of each moved function (the same code
 * at the same address), so binding that one instead makes the wheel installable down to glibc 2.17 (manylinux2014,
 * docs/packaging.md); on an older glibc the old versions live in libpthread.so.0, which the library therefore
 * links (CMakeLists.txt). This header is force-included into every unit of the bundled library where the C library
 * is glibc on x86-64, whose first symbol version is GLIBC_2.2.5 (tests/test_packaging.py checks the built file). */
#ifndef SIMDBIND_GLIBC_VERSIONS_H
#define SIMDBIND_GLIBC_VERSIONS_H

__asm__(".symver pthread_create, pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_join, pthread_join@GLIBC_2.2.5");
__asm__(".symver pthread_once, pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_mutex_trylock, pthread_mutex_trylock@GLIBC_2.2.5");

#endif
