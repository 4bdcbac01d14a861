#!/usr/bin/python3
"""quire's views run by Dask distributed: the recipe `make scale-demo` runs (docs/scale.md).

A scheduler and WORKERS worker processes on this machine, over loopback. `quire split` cuts the
export into byte ranges at line starts; each Dask task runs `quire view run VIEW EXPORT --range
START:END --out DIR --partition-by COL --part task-K` (one thread: the workers are the
parallelism) and writes its parts and its fragment into one dataset; `quire dataset merge DIR`
joins the fragments. The same view then runs in one process into a second dataset, and the two
must hold the same rows: the same count and the same digest (an order-free sum of each row's
SHA-256, rows read back with `quire query DIR`). Prints what it measured as JSON; exits 1 when
the datasets differ or a task fails.

  /usr/bin/python3 scripts/scale_demo.py --quire build/native/native/quire --export big.ndjson \
      --view VIEW.json --partition-by gender --workers 2 --work build/scale
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time


def run_quire(argv):
    """Runs quire, returning (seconds, peak RSS in MiB, stderr); raises on failure."""
    started = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode('utf-8', 'replace')
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {err.strip()}")
    return seconds, usage.ru_maxrss / 1024.0, err


def view_task(quire, view, export, start, end, out, column, part):
    """One Dask task: one byte range of the export into the dataset, as part `part`."""
    seconds, rss, _ = run_quire([quire, 'view', 'run', view, export, '--range', f'{start}:{end}', '--out', out,
                                 '--partition-by', column, '--part', part, '--threads', '1', '--quiet'])
    return {'part': part, 'bytes': end - start, 'seconds': seconds, 'rssMiB': rss, 'pid': os.getpid()}


def worker_rss():
    import psutil
    return psutil.Process().memory_info().rss / 1048576.0


def digest(quire, dataset):
    """Rows and an order-free digest of a dataset's rows (as `quire query DIR` prints them)."""
    total = 0
    rows = 0
    p = subprocess.Popen([quire, 'query', dataset], stdout=subprocess.PIPE)
    for line in p.stdout:
        total = (total + int.from_bytes(hashlib.sha256(line).digest(), 'big')) % (1 << 256)
        rows += 1
    if p.wait() != 0:
        raise RuntimeError(f'quire query {dataset} exited {p.returncode}')
    return rows, f'{total:064x}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quire', required=True)
    ap.add_argument('--export', required=True, help='an NDJSON export')
    ap.add_argument('--view', required=True, help='a ViewDefinition')
    ap.add_argument('--partition-by', required=True)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--tasks', type=int, default=0, help='byte ranges (default: one a worker)')
    ap.add_argument('--work', required=True, help='a folder for the two datasets (emptied first)')
    ap.add_argument('--out', help='write the readings here as JSON too')
    args = ap.parse_args()
    quire = os.path.abspath(args.quire)
    export = os.path.abspath(args.export)
    view = os.path.abspath(args.view)
    tasks = args.tasks or args.workers
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    dask_dir = os.path.join(args.work, 'dask')
    multi = os.path.join(args.work, 'dask-dataset')
    single = os.path.join(args.work, 'one-process-dataset')

    ranges = [json.loads(line) for line in
              subprocess.run([quire, 'split', export, '--parts', str(tasks)], check=True, capture_output=True,
                             text=True).stdout.splitlines()]
    size = os.path.getsize(export)

    # Imported here: the rest of the script (and --help) needs no Dask.
    from distributed import Client, LocalCluster
    import dask
    # The workers' statistical profiler samples every thread each 10 ms: CPU the tasks need here.
    dask.config.set({'temporary-directory': dask_dir, 'distributed.worker.daemon': False,
                     'distributed.worker.profile.enabled': False})
    started = time.monotonic()
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host='127.0.0.1',
                      dashboard_address=None, protocol='tcp://', silence_logs=40) as cluster, Client(cluster) as client:
        cluster_seconds = time.monotonic() - started
        started = time.monotonic()
        futures = [client.submit(view_task, quire, view, export, r['start'], r['end'], multi, args.partition_by,
                                 f"task-{r['part']:05d}", pure=False) for r in ranges]
        results = client.gather(futures)
        merge_seconds, _, merge_err = run_quire([quire, 'dataset', 'merge', multi])
        dask_seconds = time.monotonic() - started
        worker_rss_mib = client.run(worker_rss)

    one_seconds, one_rss, one_err = run_quire([quire, 'view', 'run', view, export, '--out', single,
                                              '--partition-by', args.partition_by, '--threads', '1'])
    resources = int(one_err.split(': ', 1)[1].split(' resources')[0])
    multi_rows, multi_digest = digest(quire, multi)
    single_rows, single_digest = digest(quire, single)
    same = multi_rows == single_rows and multi_digest == single_digest

    by_worker = {}
    for r in results:
        w = by_worker.setdefault(r['pid'], {'tasks': 0, 'seconds': 0.0, 'peakTaskRssMiB': 0.0})
        w['tasks'] += 1
        w['seconds'] += r['seconds']
        w['peakTaskRssMiB'] = max(w['peakTaskRssMiB'], r['rssMiB'])
    reading = {
        'exportBytes': size,
        'resources': resources,
        'workers': args.workers,
        'tasks': len(ranges),
        'clusterStartSeconds': round(cluster_seconds, 3),
        'dask': {'seconds': round(dask_seconds, 3), 'mergeSeconds': round(merge_seconds, 3),
                 'resourcesPerSecond': round(resources / dask_seconds),
                 'workerProcessRssMiB': sorted(round(v, 1) for v in worker_rss_mib.values()),
                 'byWorker': [{k: round(v, 3) if isinstance(v, float) else v for k, v in w.items()}
                              for w in by_worker.values()]},
        'oneProcess': {'seconds': round(one_seconds, 3), 'rssMiB': round(one_rss, 1),
                       'resourcesPerSecond': round(resources / one_seconds)},
        'speedup': round(one_seconds / dask_seconds, 3),
        'rows': {'dask': multi_rows, 'oneProcess': single_rows},
        'digest': {'dask': multi_digest, 'oneProcess': single_digest},
        'same': same,
    }
    text = json.dumps(reading, indent=2)
    print(text)
    if args.out:
        with open(args.out, 'w') as f:
            f.write(text + '\n')
    print(f"scale-demo: {resources} resources ({size / 1048576:.0f} MiB), {args.workers} Dask workers "
          f"{dask_seconds:.2f} s against one process {one_seconds:.2f} s ({one_seconds / dask_seconds:.2f}x); "
          f"{merge_err.strip()}; rows {'the same' if same else 'DIFFER'}", file=sys.stderr)
    return 0 if same else 1


if __name__ == '__main__':
    sys.exit(main())
