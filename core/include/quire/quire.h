// quire/quire.h — the whole public C++ API.
#pragma once

#include "quire/error.h"
#include "quire/json.h"
#include "quire/platform.h"
#include "quire/result.h"
#include "quire/version.h"
