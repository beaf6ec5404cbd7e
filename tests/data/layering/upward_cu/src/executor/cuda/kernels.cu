// A CUDA file of the executor that includes the planner above it.
#include "kareus/planner/planner.hpp"
