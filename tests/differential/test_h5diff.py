"""Differential test of `faultline compare` against HDF5's h5diff (Debian's hdf5-tools) on pairs
of files written by h5py (h5diff_pairs.py): every layout, filter, dtype convention, link kind and
type of dataset that is not a tensor. Per dataset, h5diff's count must map onto Faultline's as
docs/h5diff.md says; long doubles, which h5diff 1.10 miscounts, are checked against numpy.

Environment: FAULTLINE_EXE (the built faultline), H5DIFF (optional, default: h5diff on PATH).
Exit 0: every count agrees; 1: some disagree (listed); 77: h5diff is not installed (skipped)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5diff_pairs  # noqa: E402

ABS = 1e-3  # h5diff -d ABS  = faultline --tolerance abs:ABS
REL = 1e-3  # h5diff -p REL  = faultline --tolerance rel:REL with the files swapped

H5DIFF_COUNT = re.compile(r'^(\d+) differences? found', re.M)
H5DIFF_POSITION = re.compile(r'^\[ ([0-9 ]+) \]', re.M)


def h5diff(exe, a, b, path, mode, cwd):
    """h5diff's answer for one object: (exit code, count or None, distinct positions, text)."""
    args = [exe, '-r', '--follow-symlinks']
    if mode == 'abs':
        args += ['-d', repr(ABS)]
    elif mode == 'rel':
        args += ['-p', repr(REL)]
    p = subprocess.run(args + [a, b, path, path], cwd=cwd, capture_output=True, text=True, timeout=120)
    counts = [int(n) for n in H5DIFF_COUNT.findall(p.stdout)]
    positions = set(H5DIFF_POSITION.findall(p.stdout))
    return p.returncode, (sum(counts) if counts else None), positions, p.stdout + p.stderr


def faultline(exe, a, b, mode, cwd):
    args = [exe, 'compare', a, b, '--allow-external', '--json', '--quiet']
    if mode == 'abs':
        args += ['--tolerance', 'abs:%r' % ABS]
    elif mode == 'rel':
        args = [exe, 'compare', b, a, '--allow-external', '--json', '--quiet', '--tolerance', 'rel:%r' % REL]
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p.returncode, doc, p.stderr


def opposite_infinities(a, b, name):
    """Pairs where the first file holds an infinity and the second the other one (h5diff -p
    computes inf/inf there, which is NaN, and counts nothing)."""
    with h5py.File(a, 'r') as fa, h5py.File(b, 'r') as fb:
        x, y = fa[name][()], fb[name][()]
    if not (np.issubdtype(np.asarray(x).dtype, np.floating) and np.issubdtype(np.asarray(y).dtype, np.floating)):
        return 0
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return int(np.sum(np.isinf(x) & np.isinf(y) & (np.sign(x) != np.sign(y))))


def numpy_count(a, b, name):
    with h5py.File(a, 'r') as fa, h5py.File(b, 'r') as fb:
        return int(np.sum(fa[name][()] != fb[name][()]))


def faultline_counts(doc, name):
    """What Faultline says of `name`: ('tensor', entry) | ('record', entry) | (list name, entry)."""
    for t in doc['tensors']:
        if t['name'] == name:
            return 'tensor', t
    for r in doc['records']:
        if r['name'] == name:
            return 'record', r
    for key in ('not_comparable', 'not_compared', 'errors', 'unpaired'):
        for e in doc[key]:
            if e['name'] == name:
                return key, e
    return None, None


def judge(case, mode, name, mapping, doc, h5, files):
    """(h5diff figure, Faultline figure, agree, note) for one dataset under its mapping."""
    rc, count, positions, text = h5
    kind, entry = faultline_counts(doc, name)
    bits_mode = mode == 'exact'
    if mapping.startswith('soft:'):
        target_kind, target = faultline_counts(doc, mapping[5:])
        mine = target['mismatches'] if bits_mode else target['beyond_tolerance']
        if bits_mode:
            mine -= target['nan_payload_changed']
        return count, mine, target_kind == 'tensor' and count == mine and kind is None, 'as ' + mapping[5:]
    if kind is None:
        return count, 'missing', False, 'not in the report: dropped'
    if mapping in ('count', 'bits'):
        if kind == 'tensor':
            mine = entry['mismatches'] if bits_mode else entry['beyond_tolerance']
            if bits_mode and mapping == 'count':
                mine -= entry['nan_payload_changed']  # h5diff: a NaN equals every NaN
            if mode == 'rel':
                mine -= opposite_infinities(files[0], files[1], name)
            return count, mine, count == mine, ''
        if kind == 'record':
            return count, entry['mismatches'], count == entry['mismatches'], ''
        return count, kind, False, entry.get('message', entry.get('reason', ''))
    if mapping == 'positions':
        mine = entry['mismatched_elements'] if kind == 'record' else entry.get('mismatches')
        return len(positions), mine, len(positions) == mine, 'h5diff: %s' % count
    if mapping.startswith('refsum:'):
        mine = 0
        for target in mapping[7:].split(','):
            _, t = faultline_counts(doc, target)
            mine += t['mismatches'] - t['nan_payload_changed']
        return count, mine, count == mine and kind == 'record' and entry['mismatches'] == 0, \
            'references lead to the same paths; the data there'
    if mapping == 'differs':
        return count, entry['mismatches'], (count or 0) > 0 and entry['mismatches'] > 0, ''
    if mapping == 'empty':
        ok = kind == 'record' and entry['values'] == 0 and entry['mismatches'] == 0 and count == 0 and \
            'not comparable' in text
        return count, entry['mismatches'], ok, 'h5diff: not comparable, 0 differences'
    if mapping == 'numpy':
        want = numpy_count(files[0], files[1], name)
        return count, entry['mismatches'], entry['mismatches'] == want, 'numpy: %d' % want
    if mapping == 'padding':
        want = numpy_count(files[0], files[1], name)
        return count, entry['mismatches'], entry['mismatches'] == 0 and want == 0 and (count or 0) > 0, \
            'values equal (numpy), padding differs'
    if mapping in ('not_comparable', 'not_compared'):
        h5_differs = (count or 0) > 0
        ok = kind == mapping and h5_differs == (mapping == 'not_comparable') and rc != 2
        return count, kind, ok, entry.get('message', entry.get('reason', ''))
    if mapping == 'error':
        return 'exit %d' % rc, kind, kind == 'errors' and rc == 2, entry.get('message', '')
    return count, kind, False, 'unknown mapping ' + mapping


def main():
    exe = os.environ.get('FAULTLINE_EXE', '')
    h5diff_exe = os.environ.get('H5DIFF') or shutil.which('h5diff')
    if not h5diff_exe or not os.path.exists(h5diff_exe):
        print('SKIP: h5diff is not installed (Debian: apt-get install hdf5-tools, as scripts/setup-deps does)')
        return 77
    if not exe or not os.path.exists(exe):
        print('FAULTLINE_EXE is not set to the built faultline', file=sys.stderr)
        return 2
    version = subprocess.run([h5diff_exe, '--version'], capture_output=True, text=True).stdout.strip()
    failures = 0
    rows = 0
    with tempfile.TemporaryDirectory(prefix='faultline-h5diff-') as d:
        cases = h5diff_pairs.write_pairs(d)
        os.chdir(d)  # h5py and h5diff find external raw storage from the current directory
        print('%s; faultline: %s' % (version, exe))
        print('%-16s %-5s %-24s %-16s %14s %14s  %s' % ('case', 'mode', 'dataset', 'mapping', 'h5diff',
                                                       'faultline', 'note'))
        for case in cases:
            a, b = case['files']
            for mode in case['modes']:
                rc, doc, err = faultline(exe, a, b, mode, d)
                expected_rc = 2 if any(m == 'error' for m in case['datasets'].values()) else 1
                if doc is None or rc != expected_rc:
                    print('FAIL %s %s: faultline exit %d (expected %d): %s' % (case['name'], mode, rc,
                                                                                expected_rc, err.strip()))
                    failures += 1
                    if doc is None:
                        continue
                for name, mapping in sorted(case['datasets'].items()):
                    if mode != 'exact' and (name in case.get('exact_only', []) or mapping not in
                                            ('count', 'soft:local', 'error')):
                        continue
                    h5 = h5diff(h5diff_exe, a, b, '/' + name, mode, d)
                    theirs, mine, ok, note = judge(case['name'], mode, name, mapping, doc, h5, (a, b))
                    rows += 1
                    failures += 0 if ok else 1
                    print('%s %-16s %-5s %-24s %-16s %14s %14s  %s' % ('  ' if ok else '✗ ', case['name'], mode,
                                                                       name, mapping, theirs, mine, note))
                    if not ok:
                        print('    h5diff said: ' + h5[3].strip().replace('\n', '\n    '))
                # Nothing dropped: every dataset of both files is somewhere in the report.
                for path in (a, b):
                    for name in dataset_names(path):
                        if faultline_counts(doc, name)[0] is None:
                            print('✗ %s %s: %s of %s is not in the report' % (case['name'], mode, name, path))
                            failures += 1
    print('%d comparisons, %d disagreements' % (rows, failures))
    return 1 if failures else 0


def dataset_names(path):
    """Every name under which a dataset is reached, soft links that resolve left out (their
    targets have names of their own) and links that lead nowhere kept."""
    names = []
    with h5py.File(path, 'r') as f:
        def walk(group, prefix):
            for key in group.keys():
                name = prefix + key
                link = group.get(key, getlink=True)
                try:
                    obj = group.get(key)
                except (KeyError, OSError):
                    obj = None
                if isinstance(link, h5py.SoftLink) and obj is not None:
                    continue
                if isinstance(obj, h5py.Group):
                    walk(obj, name + '/')
                else:
                    names.append(name)
        walk(f, '')
    return names


if __name__ == '__main__':
    sys.exit(main())
