// Kept for branches that still include it (the tier-C work in flight): tile input moved to
// exec/tile_input.h. Delete once nothing includes this header.
#pragma once
#include "exec/tile_input.h"
