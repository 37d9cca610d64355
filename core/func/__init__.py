"""``ember.func``: PyTorch's ``torch.func`` composable transforms.

``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``hessian`` ride on ember's reverse-mode
autograd (``jvp``/``jacfwd`` by reverse mode too); ``vmap`` loops over the batch. They nest:
``vmap(grad(f))``, ``jacrev(jacrev(f))``, ``vmap(functional_call ...)`` for ensembles.
"""

from ._functional_call import functional_call, stack_module_state
from ._grad import grad, grad_and_value, jvp, vjp
from ._jac import hessian, jacfwd, jacrev
from ._vmap import vmap

__all__ = [
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "stack_module_state",
    "vjp",
    "vmap",
]
