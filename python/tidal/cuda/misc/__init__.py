"""numba-cuda's ``numba.cuda.misc``: its ``special`` module's literal_unroll."""
