#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the small snapshot fixtures of tests/core/test_snapshot.cpp and
test_replay.cpp with Python's own pickle (no torch needed): dicts shaped as
torch.cuda.memory._snapshot() returns them (torch/csrc/cuda/memory_snapshot.cpp),
frames shared between events as PyTorch shares them, so that the pickle's memo
refers back to them. Run from this folder: python3 make_fixtures.py
The expected figures are worked out by hand in the tests' comments."""
import gzip
import pickle

LINEAR = {"filename": "/usr/lib/python3/torch/nn/modules/linear.py", "line": 125, "name": "forward"}
TRAIN = {"filename": "train.py", "line": 42, "name": "step"}
STACK_AB = [LINEAR, TRAIN]  # one list object, shared by two events (memo)
STACK_C = [TRAIN]


def ev(action, addr, size, t, frames=None, stream=0):
    e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t}
    e["frames"] = frames if frames is not None else []
    return e


def block(size, requested, state, frames=None):
    return {"address": 0, "size": size, "requested_size": requested, "state": state,
            "frames": frames if frames is not None else []}


def basic():
    seg = {"device": 0, "address": 0x1000, "total_size": 65536, "allocated_size": 0, "active_size": 0,
           "requested_size": 0, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
           "is_expandable": False, "frames": [],
           "blocks": [block(0x1000, 0x1000, "inactive"),
                      block(0x1000, 200, "active_allocated", STACK_AB),    # 0x2000: B, allocated in the window
                      block(0x1000, 50, "active_allocated", STACK_C),      # 0x3000: C, allocated in the window
                      block(0x1000, 1000, "active_allocated", [TRAIN]),    # 0x4000: E, before the window
                      block(0x1000, 77, "active_pending_free"),            # 0x5000: not counted
                      block(65536 - 0x5000, 0, "inactive")]}
    trace = [ev("segment_alloc", 0x100000, 2097152, 0),
             ev("alloc", 0x1000, 100, 1, STACK_AB),
             ev("alloc", 0x2000, 200, 2, STACK_AB),
             ev("free_requested", 0x1000, 100, 3, STACK_AB),
             ev("free_completed", 0x1000, 100, 4, STACK_AB),
             ev("alloc", 0x3000, 50, 5, STACK_C),
             ev("free_completed", 0x9000, 400, 6, [LINEAR]),
             ev("free_requested", 0x2000, 200, 7),
             ev("segment_free", 0x100000, 2097152, 8),
             {"action": "oom", "device_free": 123, "size": 4096, "stream": 0, "time_us": 9, "frames": []},
             ev("snapshot", 0, 0, 10)]
    return {"segments": [seg], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                   "roundup_power2_divisions": {"1": 0, "2": 0}},
            "external_annotations": [
                {"name": "forward", "stage": "START", "device": 0, "time_us": 1},
                {"name": "forward", "stage": "END", "device": 0, "time_us": 5},
                {"name": "other_device", "stage": "START", "device": 1, "time_us": 2},
                {"name": "other_device", "stage": "END", "device": 1, "time_us": 3},
                {"name": "backward", "stage": "START", "device": 0, "time_us": 6},
                {"name": "backward", "stage": "END", "device": 0, "time_us": 8}]}


def multidevice():
    def seg(device, address, total, blocks):
        return {"device": device, "address": address, "total_size": total, "stream": 0, "blocks": blocks}
    return {"segments": [seg(0, 0x10000, 4096, [block(4096, 4000, "active_allocated")]),
                         seg(2, 0x20000, 8192, [block(1024, 1000, "active_allocated"),
                                                block(7168, 0, "inactive")])],
            "device_traces": [[],
                              [ev("alloc", 0x500, 10, 1), ev("alloc", 0x600, 20, 2), ev("free_completed", 0x500, 10, 3)],
                              [ev("alloc", 0x20400, 300, 1), ev("free_completed", 0x20400, 300, 2)]]}


def multidevice_single():
    # Device 0 holds one event (APPEND inside device_traces' APPENDS batch).
    return {"segments": [], "device_traces": [[ev("alloc", 0x100, 64, 1, STACK_C)],
                                              [ev("alloc", 0x200, 8, 1), ev("alloc", 0x300, 8, 2)]]}


def single():
    # One device, one event, one-item lists and a one-key dict: Python writes
    # APPEND / SETITEM instead of APPENDS / SETITEMS.
    return {"device_traces": [[{"action": "alloc", "addr": 64, "size": 512, "frames": [TRAIN]}]], "segments": []}


def empty():
    return {"segments": [], "device_traces": [[]]}


def write(name, obj, protocol=4):
    with open(name, "wb") as f:
        pickle.dump(obj, f, protocol=protocol)


if __name__ == "__main__":
    for p in (1, 2, 3, 4, 5):
        write(f"basic-p{p}.pickle", basic(), p)
    with gzip.GzipFile("basic.pickle.gz", "wb", mtime=0) as f:
        f.write(pickle.dumps(basic(), protocol=4))
    write("basic-p0.pickle", basic(), 0)  # text protocol: refused (UNICODE), with its name
    write("multidevice.pickle", multidevice())
    write("single.pickle", single())
    write("multidevice-single.pickle", multidevice_single())
    write("empty.pickle", empty())
    write("toplevel-list.pickle", [basic()["segments"]])
    noaddr = basic()
    del noaddr["device_traces"][0][1]["addr"]
    write("bad-noaddr.pickle", noaddr)
    write("bad-traces-dict.pickle", {"segments": [], "device_traces": {"0": []}})
    badsize = basic()
    badsize["segments"][0]["blocks"][2]["size"] = "big"
    write("bad-blocksize.pickle", badsize)
