// A planner source and header that use only modules below the planner.
#pragma once
#include "kareus/core/error.hpp"
#include "kareus/executor/executor.hpp"
