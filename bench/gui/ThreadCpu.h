#pragma once
// CPU time of the calling thread, in milliseconds: what the GUI thread itself spent, apart from
// the wall time the benchmarks also measure.
#include <ctime>

inline double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}
