"""Operator tables of the other runtimes' profiles, for :mod:`edgeprof.taxonomy`: ONNX operator types (the ONNX
standard, ONNX Runtime's ``com.microsoft`` contrib ops and the fused/internal kernels its graph optimizer makes —
the ``op_name`` of an ONNX Runtime profile) and LiteRT (TFLite) builtin operators (the op names of LiteRT's op
profiling). Names are matched exactly: ONNX types are CamelCase, LiteRT builtins UPPER_SNAKE, so neither meets
the ATen, MIL or XNNPACK names of the other tables.

A provider or delegate that runs a fused subgraph reports it as one op (``OpenVINO-EP-subgraph_3``,
``TRTKernel_graph_main_…``, ``TfLiteXNNPackDelegate``): :data:`SUBGRAPH` recognises them; their ops are not in the
profile, so their time is ``OTHER/delegated-subgraph``.
"""

from __future__ import annotations

import re

ONNX: dict[str, str] = {}
LITERT: dict[str, str] = {}


def _add(table: dict[str, str], spec: str, names: str) -> None:
    for n in names.split():
        table[n] = spec


for _spec, _names in (
    ("CONV/conv", "Conv ConvInteger QLinearConv FusedConv NhwcConv NhwcFusedConv DeformConv"),
    ("CONV/transposed", "ConvTranspose QLinearConvTranspose ConvTransposeWithDynamicPads"),
    ("GEMM/fully-connected", "Gemm QGemm FusedGemm"),
    ("GEMM/matmul", "MatMul MatMulInteger QLinearMatMul FusedMatMul MatMulIntegerToFloat DynamicQuantizeMatMul "
                    "MatMulNBits MatMulBnb4 MatMulFpQ4 TransposeMatMul Einsum QOrderedMatMul GatherBlockQuantizedMatMul"),
    ("ATTENTION/attention", "Attention MultiHeadAttention GroupQueryAttention QAttention PackedAttention "
                            "PackedMultiHeadAttention DecoderMaskedMultiHeadAttention DecoderMaskedSelfAttention "
                            "SparseAttention LongformerAttention DecoderAttention QOrderedAttention PagedAttention"),
    ("ATTENTION/rope", "RotaryEmbedding"),
    ("NORM/layer-norm", "LayerNormalization SkipLayerNormalization QLinearLayerNormalization"),
    ("NORM/rms-norm", "SimplifiedLayerNormalization SkipSimplifiedLayerNormalization RMSNormalization"),
    ("NORM/batch-norm", "BatchNormalization"),
    ("NORM/instance-norm", "InstanceNormalization"),
    ("NORM/group-norm", "GroupNormalization GroupNorm SkipGroupNorm"),
    ("NORM/l2-norm", "LpNormalization LRN MeanVarianceNormalization"),
    ("ACTIVATION/relu", "Relu Clip ThresholdedRelu"),
    ("ACTIVATION/activation", "Sigmoid Tanh Gelu FastGelu BiasGelu QuickGelu HardSigmoid HardSwish Elu Selu Celu "
                              "LeakyRelu PRelu Softplus Softsign Mish QLinearSigmoid QLinearLeakyRelu BiasSplitGelu"),
    ("ACTIVATION/softmax", "Softmax LogSoftmax QLinearSoftmax Hardmax BiasSoftmax"),
    ("ELEMENTWISE/arithmetic", "Add Sub Mul Div Pow Sqrt Reciprocal Exp Log Abs Neg Ceil Floor Round Sign Erf Sin Cos "
                               "Tan Asin Acos Atan Sinh Cosh Asinh Acosh Atanh Max Min Mean Sum Mod QLinearAdd QLinearMul "
                               "BiasAdd"),
    ("ELEMENTWISE/compare", "Equal Greater GreaterOrEqual Less LessOrEqual Not And Or Xor Where IsNaN IsInf Trilu"),
    ("ELEMENTWISE/bitwise", "BitShift BitwiseAnd BitwiseOr BitwiseXor BitwiseNot"),
    ("POOL/avg", "AveragePool GlobalAveragePool QLinearAveragePool QLinearGlobalAveragePool NhwcAveragePool"),
    ("POOL/max", "MaxPool GlobalMaxPool NhwcMaxPool MaxRoiPool LpPool GlobalLpPool"),
    ("REDUCTION/reduce", "ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum "
                         "ReduceLogSumExp ReduceSumSquare ArgMax ArgMin CumSum TopK QLinearReduceMean"),
    ("DATA_MOVEMENT/transpose", "Transpose ReverseSequence"),
    ("DATA_MOVEMENT/concat", "Concat QLinearConcat ConcatFromSequence SequenceConstruct"),
    ("DATA_MOVEMENT/slice", "Slice Split SplitToSequence Compress"),
    ("DATA_MOVEMENT/expand", "Expand Tile"),
    ("DATA_MOVEMENT/pad", "Pad"),
    ("DATA_MOVEMENT/layout", "DepthToSpace SpaceToDepth ReorderInput ReorderOutput"),
    ("DATA_MOVEMENT/copy", "Identity MemcpyFromHost MemcpyToHost"),
    ("DATA_MOVEMENT/scatter", "ScatterND ScatterElements Scatter NonZero"),
    ("DATA_MOVEMENT/fill", "ConstantOfShape Range EyeLike Constant"),
    ("RESHAPE/view", "Reshape Flatten Squeeze Unsqueeze Shape Size"),
    ("QUANT/quantize", "QuantizeLinear DynamicQuantizeLinear"),
    ("QUANT/dequantize", "DequantizeLinear"),
    ("QUANT/convert", "Cast CastLike"),
    ("EMBEDDING/embedding", "EmbedLayerNormalization"),
    ("EMBEDDING/gather", "Gather GatherElements GatherND GatherBlockQuantized"),
    ("RESIZE/upsample", "Resize Upsample GridSample RoiAlign"),
    ("OTHER/control-flow", "If Loop Scan"),
    ("OTHER/random", "Dropout RandomNormal RandomUniform RandomNormalLike RandomUniformLike Multinomial Bernoulli"),
):
    _add(ONNX, _spec, _names)

for _spec, _names in (
    ("CONV/conv", "CONV_2D CONV_3D"),
    ("CONV/depthwise", "DEPTHWISE_CONV_2D"),
    ("CONV/transposed", "TRANSPOSE_CONV CONV_3D_TRANSPOSE"),
    ("GEMM/fully-connected", "FULLY_CONNECTED"),
    ("GEMM/batched-matmul", "BATCH_MATMUL"),
    ("ELEMENTWISE/arithmetic", "ADD SUB MUL DIV FLOOR_DIV FLOOR_MOD POW SQRT RSQRT SQUARE SQUARED_DIFFERENCE ABS NEG EXP "
                               "LOG SIN COS MAXIMUM MINIMUM CEIL FLOOR ROUND SIGN ADD_N"),
    ("ELEMENTWISE/compare", "EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL LOGICAL_AND LOGICAL_OR LOGICAL_NOT "
                            "SELECT SELECT_V2"),
    ("ACTIVATION/relu", "RELU RELU6 RELU_N1_TO_1 RELU_0_TO_1"),
    ("ACTIVATION/activation", "LOGISTIC TANH GELU HARD_SWISH LEAKY_RELU PRELU ELU"),
    ("ACTIVATION/softmax", "SOFTMAX LOG_SOFTMAX"),
    ("NORM/l2-norm", "L2_NORMALIZATION LOCAL_RESPONSE_NORMALIZATION"),
    ("POOL/avg", "AVERAGE_POOL_2D"),
    ("POOL/max", "MAX_POOL_2D L2_POOL_2D"),
    ("REDUCTION/reduce", "MEAN SUM REDUCE_MAX REDUCE_MIN REDUCE_PROD REDUCE_ANY ARG_MAX ARG_MIN CUMSUM TOPK_V2"),
    ("DATA_MOVEMENT/transpose", "TRANSPOSE REVERSE_V2"),
    ("DATA_MOVEMENT/concat", "CONCATENATION PACK"),
    ("DATA_MOVEMENT/slice", "SLICE STRIDED_SLICE SPLIT SPLIT_V UNPACK"),
    ("DATA_MOVEMENT/pad", "PAD PADV2 MIRROR_PAD"),
    ("DATA_MOVEMENT/expand", "TILE BROADCAST_TO"),
    ("DATA_MOVEMENT/layout", "DEPTH_TO_SPACE SPACE_TO_DEPTH SPACE_TO_BATCH_ND BATCH_TO_SPACE_ND"),
    ("DATA_MOVEMENT/scatter", "SCATTER_ND"),
    ("DATA_MOVEMENT/fill", "FILL ZEROS_LIKE ONES_LIKE RANGE"),
    ("RESHAPE/view", "RESHAPE SQUEEZE EXPAND_DIMS SHAPE"),
    ("QUANT/quantize", "QUANTIZE"),
    ("QUANT/dequantize", "DEQUANTIZE"),
    ("QUANT/convert", "CAST"),
    ("EMBEDDING/embedding", "EMBEDDING_LOOKUP"),
    ("EMBEDDING/gather", "GATHER GATHER_ND"),
    ("RESIZE/upsample", "RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR"),
    ("OTHER/control-flow", "WHILE IF CALL_ONCE"),
):
    _add(LITERT, _spec, _names)

SUBGRAPH_SPEC = "OTHER/delegated-subgraph"
# a fused subgraph run by an ONNX Runtime execution provider or a LiteRT delegate, reported as one op
SUBGRAPH = re.compile(r"-EP-subgraph_\d+$|^TRTKernel_|^(?:CoreML|QNN|NNAPI|Xnnpack|Dnnl|Vitis|WebGpu|Js)\w*_\w*_\d+_\d+$"
                      r"|^TfLite\w*Delegate\w*$|^DELEGATE$")
