#include "kareus/planner/ok.h"
#include "kareus/store/store.hpp"
