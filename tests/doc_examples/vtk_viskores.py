# Prelude of docs/bridges/viskores.md's pipeline: values on a 10x10x10 image.
import numpy as np
from vtkmodules.vtkCommonDataModel import vtkImageData

image = vtkImageData()
image.SetDimensions(10, 10, 10)
values = np.linspace(0.0, 50.0, 1000, dtype=np.float32)
