"""Prints what meson needs to build _ucoll_torch against the torch of this
interpreter, one "key=value" a line: abi (torch._C._GLIBCXX_USE_CXX11_ABI),
inc (include directories: where torch/csrc/distributed/c10d/ProcessGroup.hpp
is, its csrc/api/include, pybind11's), libdir (where libtorch_python.so is).
Exits 1 with the reason on stderr when torch or pybind11 is missing."""
import glob
import os
import sys

try:
    import pybind11
    import torch
    import torch.utils.cpp_extension as ext
except ImportError as e:
    sys.exit(f"{sys.executable}: {e}")

HEADER = os.path.join("torch", "csrc", "distributed", "c10d", "ProcessGroup.hpp")
roots = [r for r in ["/usr/include"] + ext.include_paths()[:1]
         if os.path.isfile(os.path.join(r, HEADER))]
if not roots:
    sys.exit(f"torch {torch.__version__}: no {HEADER} (Debian: libtorch-dev)")
libdirs = [d for d in ["/usr/lib/" + sys.implementation._multiarch] + ext.library_paths()
           if glob.glob(os.path.join(d, "libtorch_python.so"))]
if not libdirs:
    sys.exit(f"torch {torch.__version__}: no libtorch_python.so (Debian: libtorch-dev)")
print(f"abi={int(torch._C._GLIBCXX_USE_CXX11_ABI)}")
print(f"version={torch.__version__}")
print(f"inc={roots[0]}")
print(f"inc={os.path.join(roots[0], 'torch', 'csrc', 'api', 'include')}")
print(f"inc={pybind11.get_include()}")
print(f"libdir={libdirs[0]}")
