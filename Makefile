# One command per job. `make demo` and `make test` set everything up on a fresh machine first
# (scripts/bootstrap is idempotent and quick when there is nothing to do).
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# Emscripten 3.1.6's optimizer requires acorn, which Debian installs here (docs/architecture.md, section 4).
export NODE_PATH := /usr/share/nodejs
JOBS ?= 2
NATIVE := build/native
WASM := build/wasm
ASAN := build/asan
# Where `make js` puts the package's build; tests read it from QUIRE_DIST when it is elsewhere.
JS_DIST ?= js/dist
FUZZ := build/fuzz
# The native benchmark runner (bench/): its own executable, not part of the `quire` CLI.
QUIRE_BENCH_BIN := $(NATIVE)/bench/quire-bench
CMAKE_FLAGS ?= -DQUIRE_WERROR=ON
FUZZ_SECONDS ?= 60

.PHONY: all bootstrap native wasm js test test-native test-wasm test-js test-asan demo fuzz fuzz-smoke fuzz-merge \
        format format-check clean bench bench-quick scaling bench-base report test-bench-smoke test-size wasm-size site test-site scale-demo

all: native js

bootstrap:
	@bash scripts/bootstrap

$(NATIVE)/build.ninja:
	cmake -S . -B $(NATIVE) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

native: bootstrap $(NATIVE)/build.ninja
	cmake --build $(NATIVE) -j $(JOBS)

$(WASM)/build.ninja:
	emcmake cmake -S . -B $(WASM) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

wasm: bootstrap $(WASM)/build.ninja
	cmake --build $(WASM) -j $(JOBS)

# The npm package: the wasm module and its glue, plus the TypeScript wrapper compiled to dist/
# (one bundled index.js and the .d.ts files).
# Only the shipped module: the benchmark module stays in $(WASM)/bench/ (bench/run.mjs loads it there).
js: wasm
	mkdir -p $(JS_DIST)
	rm -f $(JS_DIST)/bench.js $(JS_DIST)/bench.d.ts  # left in a dist/ built before the harness left the package
	cp $(WASM)/wasm/quire.mjs $(WASM)/wasm/quire.wasm js/src/quire.d.mts $(JS_DIST)/
	node js/scripts/gen-error-codes.mjs
	# tsc type-checks and writes the .d.ts files only (emitDeclarationOnly); esbuild writes the JavaScript as
	# one module (index.js; init() imports the glue quire.mjs beside it): one file to load, not twenty (js/scripts/bundle.mjs).
	cd js && npx tsc -p tsconfig.json --outDir $(abspath $(JS_DIST))
	node js/scripts/bundle.mjs $(JS_DIST)

test-native: native
	cd $(NATIVE) && ctest --output-on-failure

test-wasm: wasm
	cd $(WASM) && ctest --output-on-failure

test-js: js
	cd js && QUIRE_DIST=$(abspath $(JS_DIST)) npm test

$(ASAN)/build.ninja:
	CC=clang CXX=clang++ cmake -S . -B $(ASAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUIRE_SANITIZE=ON $(CMAKE_FLAGS)

test-asan: bootstrap $(ASAN)/build.ninja
	cmake --build $(ASAN) -j $(JOBS)
	# allocator_may_return_null: core asks malloc first whether a large buffer can be had
	# (core/src/common/alloc.h) and must see the null a real allocator gives, not ASan's abort.
	cd $(ASAN) && ASAN_OPTIONS=allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure

$(FUZZ)/build.ninja:
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQUIRE_FUZZ=ON -DQUIRE_TESTS=ON

# Runs every libFuzzer target for FUZZ_SECONDS, starting from its saved corpus (new finds go to
# build/fuzz/found/<target>, not into the repository), with tests/fuzz/<target>.dict if there is one.
FUZZ_TARGETS := $(basename $(notdir $(wildcard tests/fuzz/*_fuzz.cpp)))
fuzz: bootstrap $(FUZZ)/build.ninja
	cmake --build $(FUZZ) -j $(JOBS) --target $(FUZZ_TARGETS)
	failed=; for target in $$(cd $(FUZZ)/tests && ls *_fuzz 2>/dev/null); do \
	  name=$${target%_fuzz}; found=$(FUZZ)/found/$$name; mkdir -p $$found $(FUZZ)/artifacts; \
	  echo "fuzz: $$target for $(FUZZ_SECONDS) s"; \
	  dict=tests/fuzz/$$name.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
	  rm -f $(FUZZ)/artifacts/$$name-*; \
	  if $(FUZZ)/tests/$$target -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
	      -artifact_prefix=$(FUZZ)/artifacts/$$name- $$dict $$found tests/fuzz/corpus/$$name >$$found.log 2>&1; then \
	    tail -n 12 $$found.log; \
	  else \
	    failed="$$failed $$name"; grep -v -E '^(#[0-9]+ +(NEW|REDUCE|pulse|INITED|RELOAD)|\s+NEW_FUNC)' $$found.log | tail -n 80; \
	    for a in $(FUZZ)/artifacts/$$name-*; do [ -f "$$a" ] || continue; \
	      echo "fuzz: $$target failed on $$a ($$(stat -c %s "$$a") bytes), base64:"; head -c 16384 "$$a" | base64 -w 120; done; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (replay: build/fuzz/tests/NAME_fuzz $(FUZZ)/artifacts/NAME-*)"; exit 1; fi

fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=10

# Grows the saved corpora: runs each target FUZZ_SECONDS (niced, one at a time) from its corpus,
# then measures corpus and finds with -merge=1 (the control file lists each input's coverage
# features) and rebuilds tests/fuzz/corpus/<target> from them with tests/fuzz/pick_corpus.mjs:
# every hand-written seed (a name that is not libFuzzer's 40-hex SHA-1), then greedily the inputs
# that add the most coverage, within FUZZ_CORPUS_MAX_FILES files and FUZZ_CORPUS_MAX_BYTES bytes,
# each at most FUZZ_MERGE_MAX_LEN bytes. A target that fails keeps its corpus; the input is kept
# under build/fuzz/merge/<target>/.
FUZZ_MERGE_MAX_LEN ?= 8192
FUZZ_CORPUS_MAX_FILES ?= 60
FUZZ_CORPUS_MAX_BYTES ?= 204800
fuzz-merge: bootstrap $(FUZZ)/build.ninja
	cmake --build $(FUZZ) -j $(JOBS) --target $(FUZZ_TARGETS)
	failed=""; for target in $(FUZZ_TARGETS); do \
	  name=$${target%_fuzz}; corpus=tests/fuzz/corpus/$$name; work=$(FUZZ)/merge/$$name; \
	  rm -rf $$work; mkdir -p $$work/found $$work/old $$work/new $$corpus; \
	  for f in $$corpus/*; do \
	    [ -f "$$f" ] || continue; \
	    if [[ $$(basename "$$f") =~ ^[0-9a-f]{40}$$ ]]; then cp "$$f" $$work/old/; else cp "$$f" $$work/new/; fi; \
	  done; \
	  echo "fuzz-merge: $$target for $(FUZZ_SECONDS) s"; \
	  dict=tests/fuzz/$$name.dict; [ -f $$dict ] && dict=-dict=$$dict || dict=; \
	  if ! nice $(FUZZ)/tests/$$target -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MERGE_MAX_LEN) -rss_limit_mb=2048 \
	      -print_final_stats=1 -artifact_prefix=$$work/ $$dict $$work/found $$corpus >$$work/run.log 2>&1; then \
	    tail -n 40 $$work/run.log; echo "fuzz-merge: $$target FAILED: the input is in $$work (crash-*, leak-*, timeout-*...)"; \
	    failed="$$failed $$target"; continue; \
	  fi; \
	  tail -n 6 $$work/run.log; \
	  mkdir -p $$work/scratch; \
	  nice $(FUZZ)/tests/$$target -merge=1 -merge_control_file=$$work/control -max_len=$(FUZZ_MERGE_MAX_LEN) \
	    -rss_limit_mb=2048 $$work/scratch $$work/new $$work/old $$work/found >$$work/merge.log 2>&1; \
	  tail -n 1 $$work/merge.log; \
	  node tests/fuzz/pick_corpus.mjs --control $$work/control --out $$corpus \
	    --max-files $(FUZZ_CORPUS_MAX_FILES) --max-bytes $(FUZZ_CORPUS_MAX_BYTES); \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz-merge: failures in$$failed (their corpora are unchanged)" >&2; exit 1; fi

# Formatting: clang-format 14 (Debian bookworm's, installed by scripts/bootstrap) with the
# repository's .clang-format, over every C++ source and header the project wrote (tracked or new
# files under core/ native/ wasm/ tests/ bench/; never .deps, build output or node_modules).
CLANG_FORMAT ?= clang-format
FORMAT_FILES = $(shell git ls-files --cached --others --exclude-standard -- core native wasm tests bench | \
                 grep -E '\.(c|cc|cpp|h|hpp)$$' | while read -r f; do [ -f "$$f" ] && echo "$$f"; done)
define check_clang_format_version
	@version=$$($(CLANG_FORMAT) --version 2>/dev/null | head -n 1 || true); \
	if ! [[ "$$version" =~ clang-format\ version\ 14\. ]]; then \
	  echo "make $@: needs clang-format 14.x (Debian bookworm's clang-format package; scripts/bootstrap installs it)," \
	       "found: $${version:-no $(CLANG_FORMAT) on PATH}" >&2; \
	  exit 1; \
	fi
endef

format-check: bootstrap
	$(check_clang_format_version)
	@if ! $(CLANG_FORMAT) --dry-run -Werror $(FORMAT_FILES); then \
	  echo "make format-check: the files above are not formatted as .clang-format says: run make format" >&2; exit 1; \
	fi
	@echo "make format-check: $(words $(FORMAT_FILES)) files formatted"

format: bootstrap
	$(check_clang_format_version)
	$(CLANG_FORMAT) -i $(FORMAT_FILES)

# Every test: the formatting (format-check), the Catch2 suite native and in wasm (under Node),
# the fuzz corpora replayed, the same suite under ASan+UBSan, a short run of every fuzzer, the
# npm package's tests in Node and in headless Chromium (including the packed tarball), and the
# site's tests (its server and the dashboard in headless Chromium).
# The same quick benchmark cases natively and in Node must compute equal checksums; the benchmark
# module's own tests (bench/bench.test.mjs) and the MLLP load driver's smoke (bench/mllp-load.test.mjs)
# run with them.
test-bench-smoke: native js
	mkdir -p build/readings-smoke
	$(QUIRE_BENCH_BIN) --quick --filter 64kib,nested,format.find/customers-200k,format.find/wide-100k,crypto.open,store.partition-open,store.append-row/partitions-100 --out build/readings-smoke/native.json
	node bench/run.mjs --quick --no-peers --filter 64kib,nested,format.find/customers-200k,format.find/wide-100k,crypto.open,store.partition-open,store.append-row/partitions-100 --out build/readings-smoke/wasm-node.json
	node bench/validate-reading.mjs build/readings-smoke/native.json build/readings-smoke/wasm-node.json
	$(QUIRE_BENCH_BIN) compare build/readings-smoke/native.json build/readings-smoke/wasm-node.json
	QUIRE_DIST=$(abspath $(JS_DIST)) node --test bench/bench.test.mjs
	QUIRE_DIST=$(abspath $(JS_DIST)) QUIRE_CLI=$(abspath $(NATIVE))/native/quire node --test bench/mllp-load.test.mjs

# The shipped sizes against bench/size-budget.json (quire.wasm raw and gzipped, its glue, the npm
# tarball): over budget fails. The cold start (a fresh node importing the package and awaiting
# init(), median of 7) and where it goes are printed beside them, never asserted. About 20 s.
test-size: js
	QUIRE_DIST=$(abspath $(JS_DIST)) node --test bench/size-gate.test.mjs
	node bench/size-gate.mjs --dist $(abspath $(JS_DIST))

# What quire.wasm is made of: sections, code by source file, data by table (bench/wasm-size.mjs;
# relinks the module once into a temporary folder with names and a link map, about a minute).
wasm-size: wasm
	node bench/wasm-size.mjs --build $(WASM)

test: format-check test-native test-wasm test-js test-asan fuzz-smoke test-bench-smoke test-size test-site
	@echo "make test: all suites passed"

# The site (site/README.md): builds the npm package, then serves site/ with the package at /pkg/
# and bench/readings/ at /readings/ on http://127.0.0.1:8080/ (PORT=N make site for another),
# cross-origin isolated. The dashboard is at /dashboard/.
site: js
	node site/serve.mjs --pkg $(JS_DIST)

# The site's tests: its server (ranges, MIME types, isolation, no path out of its roots), the
# dashboard and the viewer end to end in headless Chromium; screenshots go to
# build/site-screenshots/. The viewer runs the npm package's build (make js), served at /pkg/;
# its 1 GB test file is made once by the native CLI (build/viewer-1gb/, about 45 s).
# One test file at a time: each drives its own Chromium, and the machine is small.
test-site: native js
	QUIRE_DIST=$(abspath $(JS_DIST)) node --test --test-concurrency=1 site/test/*.test.mjs

# Benchmarks: the same C++ cases natively (quire-bench), in Node and in headless Chromium (the
# benchmark module, quire-bench.wasm); one reading each (bench/readings/local/), validated against
# bench/reading.schema.json, then compared.
# BENCH_ARGS passes options to all three runners (e.g. BENCH_ARGS="--filter json.check").
READINGS ?= bench/readings/local
BENCH_ARGS ?=
bench: native js
	mkdir -p $(READINGS)
	$(QUIRE_BENCH_BIN) $(BENCH_ARGS) --out $(READINGS)/native.json
	node bench/run.mjs $(BENCH_ARGS) --out $(READINGS)/wasm-node.json
	node bench/run-browser.mjs $(BENCH_ARGS) --out $(READINGS)/wasm-browser.json
	node bench/validate-reading.mjs $(READINGS)/native.json $(READINGS)/wasm-node.json $(READINGS)/wasm-browser.json
	$(QUIRE_BENCH_BIN) compare $(READINGS)/native.json $(READINGS)/wasm-node.json $(READINGS)/wasm-browser.json

bench-quick:
	$(MAKE) bench BENCH_ARGS="--quick $(BENCH_ARGS)"

# quire's views run by Dask distributed (docs/scale.md): a generated export of SCALE_MB MiB (made
# once under build/scale/), 2 worker processes over loopback, each task one byte range into one
# dataset, merged, then compared with one process (row count and digest). Readings in
# build/scale/reading.json. `make test` runs an 8 MiB version (ctest scale_demo_smoke).
SCALE_MB ?= 1100
SCALE_EXPORT := build/scale/export-$(SCALE_MB)mib.ndjson
scale-demo: native
	mkdir -p build/scale
	[ -f $(SCALE_EXPORT) ] || { node tests/gen_patients.mjs $(SCALE_EXPORT).tmp $(SCALE_MB) && mv $(SCALE_EXPORT).tmp $(SCALE_EXPORT); }
	/usr/bin/python3 scripts/scale_demo.py --quire $(NATIVE)/native/quire --export $(SCALE_EXPORT) \
	  --view tests/data/view_output/patient_view.json --partition-by gender --workers 2 \
	  --work build/scale/work --out build/scale/reading.json

# Scaling gates, natively and in wasm under Node: 4x the input must cost 1.5x-8x, and each gate's
# quadratic twin must exceed 8x.
scaling: native js
	$(QUIRE_BENCH_BIN) --scaling
	node bench/run.mjs --scaling

# Base against head on the three targets: make bench-base BASE=HEAD~1 [BENCH_ARGS="--filter json --quick"]
# (BENCH_ARGS also takes --rounds N, --targets native,wasm-node,wasm-browser, --base-dir DIR).
BASE ?= HEAD~1
bench-base: native js
	CMAKE_FLAGS="$(CMAKE_FLAGS)" node bench/base-vs-head.mjs --base $(BASE) $(BENCH_ARGS)

# Regenerates the tables of docs/performance.md from the readings checked in under bench/readings/.
report:
	node bench/report.mjs

# The main job on a built-in default (see README): the JSON corpus on both targets side by side,
# then the quick benchmark suite on the three targets and their comparison.
demo: native js
	node scripts/demo.mjs
	$(MAKE) --no-print-directory bench-quick READINGS=build/readings
	mkdir -p build/demo-files
	node -e 'const r=[];for(let i=1;i<=200000;i++)r.push(JSON.stringify({id:i,name:"customer "+i,country:["NA","DE","JP","BR"][i%4],age:18+i%77,balance:(i*7919%10000000)/100}));require("fs").writeFileSync("build/demo-files/customers.ndjson",r.join("\n")+"\n")'
	$(NATIVE)/native/quire convert build/demo-files/customers.ndjson build/demo-files/customers.quire --index id:hash --index name:text
	@if [ "$${CI:-}" = true ]; then echo "demo: CI=true, not serving the site (make site serves it)"; \
	else node site/serve.mjs --pkg $(JS_DIST) --readings build/readings --extra build/demo-files; fi

clean:
	rm -rf build js/dist
