// A public C header of search that includes the store above it.
#include "kareus/store/store.hpp"
