// One leaf module using another.
#include "kareus/kernel_dvfs/study.hpp"
