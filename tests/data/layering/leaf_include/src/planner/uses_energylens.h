// A planner header that pulls in the inference energy model.
#pragma once
#include "kareus/energylens/fit.hpp"
