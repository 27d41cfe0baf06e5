"""MindSpore's dtype names, as NumPy types: ``from mindgrad import dtype as mstype``."""

import numpy as np

float16 = np.float16
float32 = np.float32
float64 = np.float64
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
bool_ = np.bool_
complex64 = np.complex64
complex128 = np.complex128
