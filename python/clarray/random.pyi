from typing import Optional, Sequence, Union

import numpy.typing as npt

from . import Array, Context

_Size = Optional[Union[int, Sequence[int]]]

class Generator:
    def __init__(self, seed: Optional[int] = ...) -> None: ...
    def uniform(self, low: float = ..., high: float = ..., size: _Size = ...,
                dtype: npt.DTypeLike = ..., ctx: Optional[Context] = ...) -> Array: ...
    def normal(self, loc: float = ..., scale: float = ..., size: _Size = ...,
               dtype: npt.DTypeLike = ..., ctx: Optional[Context] = ...) -> Array: ...
    def integers(self, low: int, high: int, size: _Size = ...,
                 dtype: npt.DTypeLike = ..., ctx: Optional[Context] = ...) -> Array: ...

def default_rng(seed: Optional[int] = ...) -> Generator: ...
