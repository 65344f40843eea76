// The host tests' one assertion: EXPECT(cond) prints the file and line of a failed
// expectation and counts it; the test goes on, so one run shows every failure. main()
// returns `failures != 0`.
#pragma once

#include <cstdio>

static int failures = 0;
#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      std::printf("%s:%d: expected %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                      \
    }                                                                  \
  } while (0)
