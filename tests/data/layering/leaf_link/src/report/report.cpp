// A report source with no include of a leaf: the leaf comes in through DEPS.
#include "kareus/core/error.hpp"
