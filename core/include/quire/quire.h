// quire/quire.h — the whole public C++ API.
#pragma once

#include "quire/csv.h"
#include "quire/dataset.h"
#include "quire/detect.h"
#include "quire/error.h"
#include "quire/fhir.h"
#include "quire/fhirpath.h"
#include "quire/format.h"
#include "quire/hl7v2.h"
#include "quire/json.h"
#include "quire/ndjson.h"
#include "quire/platform.h"
#include "quire/result.h"
#include "quire/version.h"
#include "quire/view.h"
