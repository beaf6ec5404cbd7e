#include "kareus/search/search_api.h"
