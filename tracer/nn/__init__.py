"""`tracer.nn`: jax.nn's functions (activations, softmax family, one_hot, standardize,
dot_product_attention, initializers) and flax.linen's pools, composed from tracer.numpy
and tracer.lax ops."""
from tracer.nn import initializers  # noqa: F401
from tracer.nn.activations import (celu, elu, gelu, glu, hard_sigmoid, hard_silu,  # noqa: F401
                                   hard_swish, hard_tanh, identity, leaky_relu, log1mexp,
                                   log_sigmoid, log_softmax, logmeanexp, logsumexp, mish,
                                   one_hot, relu, relu6, selu, sigmoid, silu, soft_sign,
                                   softmax, softplus, sparse_plus, sparse_sigmoid, squareplus,
                                   standardize, swish, tanh)
from tracer.nn.attention import dot_product_attention  # noqa: F401
from tracer.nn.pooling import avg_pool, max_pool  # noqa: F401
