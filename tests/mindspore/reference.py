"""MindSpore 2.x's public names, to count how much of them mindgrad offers.

The lists are taken from MindSpore's API reference sources in its repository
(``docs/api/api_python_en/*.rst``, ``docs/api/api_python/nn/mindspore.nn.Cell.rst`` and
``.../mindspore.Parameter.rst``):

- ``TOP_LEVEL``: every entry of ``mindspore.rst`` (2.x: Tensor to run_check, the sparse tensors,
  serialization, parallel and profiling names included), plus the two modes and the dtypes;
- ``OPS_FUNCTIONS``: ``mindspore.ops.rst``, every section but the sparse, COO and CSR ones;
- ``OPS_PRIMITIVES``: ``mindspore.ops.primitive.rst``, the sections on activations, losses,
  element-wise, reduction, comparison and linear algebra operators, tensor construction and
  array operations;
- ``NN``: every entry of ``mindspore.nn.rst``;
- ``TENSOR_METHODS``: the method list of ``mindspore.Tensor`` (``Tensor_list.rst``);
- ``CELL_METHODS`` and ``PARAMETER_MEMBERS``: the methods and properties those pages document.

``python3 tests/mindspore/reference.py`` prints, per list, how many names mindgrad has and which
are missing.
"""

TOP_LEVEL = """
Tensor tensor COOTensor CSRTensor RowTensor SparseTensor Parameter ParameterTuple
dtype_to_nptype dtype_to_pytype pytype_to_dtype get_py_obj_dtype QuantDtype
set_context get_context set_auto_parallel_context get_auto_parallel_context
reset_auto_parallel_context ParallelMode set_ps_context get_ps_context reset_ps_context
set_algo_parameters get_algo_parameters reset_algo_parameters set_offload_context
get_offload_context set_seed get_seed async_ckpt_thread_status build_searched_strategy
convert_model export load load_checkpoint load_distributed_checkpoint load_mindir
load_param_into_net merge_pipeline_strategys merge_sliced_parameter obfuscate_model parse_print
rank_list_for_transform restore_group_info_list save_checkpoint save_mindir
transform_checkpoint_by_rank transform_checkpoints grad value_and_grad get_grad jacfwd jacrev
jvp vjp vmap Layout shard JitConfig jit jit_class ms_class ms_function ms_memory_recycle mutable
constexpr lazy_inline DatasetHelper connect_network_with_dataset data_sink Profiler
SummaryCollector SummaryLandscape SummaryRecord set_dump get_level get_log_config run_check
GRAPH_MODE PYNATIVE_MODE int8 byte int16 short int32 intc int64 intp uint8 ubyte uint16 ushort
uint32 uintc uint64 uintp float16 half float32 single float64 double bfloat16 complex64
complex128 bool_
""".split()

OPS_FUNCTIONS = """
adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d
adaptive_max_pool2d adaptive_max_pool3d avg_pool1d avg_pool2d avg_pool3d batch_norm bias_add
ctc_greedy_decoder conv2d conv3d deformable_conv2d dropout dropout1d dropout2d dropout3d flatten
unfold fold fractional_max_pool2d fractional_max_pool3d lp_pool1d lp_pool2d lrn max_pool3d
max_unpool1d max_unpool2d max_unpool3d
binary_cross_entropy binary_cross_entropy_with_logits cosine_embedding_loss cross_entropy
gaussian_nll_loss hinge_embedding_loss huber_loss kl_div l1_loss margin_ranking_loss mse_loss
multi_margin_loss multi_label_margin_loss multilabel_soft_margin_loss nll_loss smooth_l1_loss
triplet_margin_loss
celu elu fast_gelu gelu glu gumbel_softmax hardshrink hardswish hardtanh leaky_relu log_softmax
logsigmoid mish prelu relu relu6 rrelu selu sigmoid silu soft_shrink softmax softmin softsign
tanh threshold
cdist dist pdist
choice_with_mask random_categorical log_uniform_candidate_sampler uniform_candidate_sampler
affine_grid bounding_box_decode bounding_box_encode col2im check_valid crop_and_resize
grid_sample interpolate iou pad padding pixel_shuffle pixel_unshuffle
abs absolute accumulate_n acos arccos acosh add addcdiv addcmul addmv addn angle arccosh arcsin
arcsinh arctan arctanh arctan2 asin asinh atan atan2 atanh bessel_i0 bessel_i0e bessel_i1
bessel_i1e bessel_j0 bessel_j1 bessel_k0 bessel_k0e bessel_k1 bessel_k1e bessel_y0 bessel_y1
bitwise_and bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor ceil clamp clip
copysign cos cosh cosine_similarity cov diff deg2rad digamma div divide erf erfc erfinv exp exp2
expm1 floor floor_div floor_mod float_power fmod frac hypot igamma igammac i0 inv invert lcm
ldexp lerp lgamma log log2 log10 log1p logaddexp logaddexp2 logical_and logical_not logical_or
logical_xor logit mul multiply mvlgamma neg negative positive pow rad2deg ravel real reciprocal
remainder roll rot90 round rsqrt sgn sign signbit sin sinc sinh sqrt square sub subtract t tan
tanhshrink trapz true_divide trunc truncate_div truncate_mod xdivy xlogy
all amax amin any argmax argmin cummax cummin cumsum logsumexp max mean median min norm prod std
argsort approximate_equal equal ge greater greater_equal gt intopk isclose isfinite isinf isnan
isneginf isposinf isreal is_complex is_floating_point le less less_equal lt maximum minimum ne
not_equal msort topk
bmm addbmm addmm baddbmm addr adjoint cholesky cholesky_inverse batch_dot det dot inner inverse
ger kron log_matrix_determinant matmul matrix_solve matrix_exp matrix_band_part
matrix_determinant matrix_diag matrix_diag_part matrix_set_diag mm mv outer orgqr pinv svd
tensor_dot logdet slogdet
bartlett_window blackman_window hamming_window hann_window kaiser_window
eye fill full full_like linspace logspace one_hot ones ones_like arange range zeros zeros_like
heaviside
bernoulli gamma laplace multinomial rand rand_like randint randint_like randn randn_like
random_poisson random_gamma standard_laplace standard_normal uniform
argwhere batch_to_space_nd bincount block_diag broadcast_to cartesian_prod cat chunk
column_stack concat conj count_nonzero diag diagflat diagonal dyn_shape dsplit einsum expand
expand_dims flip fliplr flipud gather gather_d gather_elements gather_nd hstack hsplit index_add
index_fill index_select inplace_add inplace_sub inplace_update masked_fill masked_select meshgrid
narrow moveaxis movedim nan_to_num normal nonzero numel permute population_count rank
repeat_elements repeat_interleave reshape reverse reverse_sequence scatter_nd select
sequence_mask shape shuffle size slice space_to_batch_nd sparse_segment_mean split squeeze stack
strided_slice sum swapaxes swapdims tensor_scatter_add tensor_scatter_div tensor_scatter_max
tensor_scatter_min tensor_scatter_mul tensor_scatter_sub tensor_scatter_elements tensor_split
tile tril transpose unbind unique unique_consecutive unique_with_pad unsorted_segment_max
unsorted_segment_min unsorted_segment_prod unsorted_segment_sum unsqueeze unstack view_as_real
vsplit where cross cumprod renorm
is_tensor scalar_cast scalar_to_tensor tuple_to_array
clip_by_global_norm clip_by_value
assign assign_add assign_sub scatter_add scatter_div scatter_min scatter_max scatter_mul
scatter_nd_add scatter_nd_div scatter_nd_max scatter_nd_min scatter_nd_mul scatter_nd_sub
scatter_update
derivative jet stop_gradient
print_
""".split()

OPS_PRIMITIVES = """
BCEWithLogitsLoss BinaryCrossEntropy CTCLoss CTCLossV2 KLDivLoss L2Loss MultilabelMarginLoss
MultiMarginLoss NLLLoss RNNTLoss SigmoidCrossEntropyWithLogits SmoothL1Loss SoftMarginLoss
SoftmaxCrossEntropyWithLogits SparseSoftmaxCrossEntropyWithLogits TripletMarginLoss
CeLU Elu FastGeLU GeLU HShrink HSigmoid HSwish LogSoftmax Mish PReLU ReLU ReLU6 SeLU Sigmoid
Softmax Softplus SoftShrink Softsign Tanh
Abs AccumulateNV2 ACos Acosh Add Addcdiv Addcmul AddN Asin Asinh Atan Atan2 Atanh BesselI0e
BesselI1e BitwiseAnd BitwiseOr BitwiseXor Ceil Conj Cos Cosh Digamma Div DivNoNan Einsum Erf
Erfc Erfinv Exp Expm1 Floor FloorDiv FloorMod Geqrf Imag Inv Invert Lerp Log Log1p LogicalAnd
LogicalNot LogicalOr Logit Mod Mul MulNoNan Neg NextAfter Pow Polar Real RealDiv Reciprocal Rint
Round Rsqrt Sign Sin Sinh Sqrt Square SquaredDifference SquareSumAll Sub Tan Trunc TruncateDiv
TruncateMod Xdivy Xlogy Zeta
Argmax ArgMaxWithValue Argmin ArgMinWithValue EuclideanNorm ReduceAll ReduceAny ReduceMax
ReduceMean ReduceMin ReduceProd ReduceStd ReduceSum
ApproximateEqual Equal EqualCount Greater GreaterEqual InTopK IsFinite IsInf IsNan Less
LessEqual Maximum Minimum NotEqual TopK
BatchMatMul BiasAdd Ger MatMul MatrixInverse Orgqr Qr Svd TridiagonalMatMul
Eps Eye Fill LinSpace OneHot Ones OnesLike Zeros ZerosLike
AffineGrid BatchToSpace BatchToSpaceND BroadcastTo Cast CheckNumerics Coalesce Col2Im Concat
ConjugateTranspose Cummax Cummin CumProd CumSum DataFormatDimMap DepthToSpace Diag DiagPart
DType Eig Expand ExpandDims FFTWithSize FillV2 FloatStatus FillDiagonal Gather GatherD GatherNd
HammingWindow Heaviside Histogram HistogramFixedWidth Hypot Identity IdentityN Im2Col IndexAdd
IndexFill InplaceAdd InplaceSub InplaceUpdate InvertPermutation IsClose Lcm LeftShift ListDiff
Lgamma LogMatrixDeterminant LogSpace LowerBound Lstsq LuSolve LuUnpack MaskedFill MaskedSelect
MatrixBandPart MatrixDeterminant MatrixDiagPartV3 MatrixDiagV3 MatrixExp MatrixLogarithm
MatrixPower MatrixSetDiagV3 MatrixSolve MatrixTriangularSolve Meshgrid Mvlgamma NonZero
ParallelConcat PopulationCount RaggedRange Range Rank Renorm Reshape ResizeNearestNeighborV2
ReverseSequence ReverseV2 RightShift Roll ScatterAddWithAxis ScatterNd ScatterNdDiv ScatterNdMax
ScatterNdMin ScatterNdMul SearchSorted SegmentMax SegmentMean SegmentMin SegmentProd SegmentSum
Select Shape Size Slice Sort SpaceToBatchND SpaceToDepth SparseSlice SparseGatherV2 Split SplitV
Squeeze Stack StridedSlice TensorScatterAdd TensorScatterDiv TensorScatterMax TensorScatterMin
TensorScatterMul TensorScatterSub TensorScatterUpdate TensorShape Tile Trace Transpose Tril
TrilIndices Triu TriuIndices Unique UniqueConsecutive UniqueWithPad UnravelIndex
UnsortedSegmentMax UnsortedSegmentMin UnsortedSegmentProd UnsortedSegmentSum Unstack UpperBound
""".split()

NN = """
Cell GraphCell LossBase Optimizer CellList SequentialCell DistributedGradReducer
DynamicLossScaleUpdateCell FixedLossScaleUpdateCell ForwardValueAndGrad GetNextSingleOp
MicroBatchInterleaved ParameterUpdate PipelineCell TimeDistributed TrainOneStepCell
TrainOneStepWithLossScaleCell WithEvalCell WithGradCell WithLossCell Conv1d Conv1dTranspose
Conv2d Conv2dTranspose Conv3d Conv3dTranspose Unfold RNN RNNCell GRU GRUCell LSTM LSTMCell
Embedding EmbeddingLookup MultiFieldEmbeddingLookup CELU ELU FastGelu GELU get_activation
Hardtanh HShrink HSigmoid HSwish LeakyReLU LogSigmoid LogSoftmax LRN Mish Softsign PReLU ReLU
ReLU6 RReLU SeLU SiLU Sigmoid Softmin Softmax SoftShrink Tanh Tanhshrink Threshold Dense BiDense
Dropout Dropout2d Dropout3d BatchNorm1d BatchNorm2d BatchNorm3d GroupNorm InstanceNorm1d
InstanceNorm2d InstanceNorm3d LayerNorm SyncBatchNorm AdaptiveAvgPool1d AdaptiveAvgPool2d
AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AvgPool1d AvgPool2d MaxPool1d MaxPool2d
Pad ConstantPad1d ConstantPad2d ConstantPad3d ReflectionPad1d ReflectionPad2d ZeroPad2d BCELoss
BCEWithLogitsLoss CosineEmbeddingLoss CrossEntropyLoss DiceLoss FocalLoss HuberLoss L1Loss
MSELoss MultiClassDiceLoss NLLLoss RMSELoss SampledSoftmaxLoss SmoothL1Loss SoftMarginLoss
SoftmaxCrossEntropyWithLogits Adadelta Adagrad Adam AdaMax AdamOffload AdamWeightDecay
AdaSumByDeltaWeightWrapCell AdaSumByGradWrapCell ASGD FTRL Lamb LARS LazyAdam Momentum
ProximalAdagrad RMSProp Rprop SGD thor Accuracy auc BleuScore ConfusionMatrix
ConfusionMatrixMetric CosineSimilarity Dice F1 Fbeta HausdorffDistance get_metric_fn Loss MAE
MeanSurfaceDistance Metric MSE names OcclusionSensitivity Perplexity Precision Recall ROC
RootMeanSquareDistance rearrange_inputs Top1CategoricalAccuracy Top5CategoricalAccuracy
TopKCategoricalAccuracy CosineDecayLR ExponentialDecayLR InverseDecayLR NaturalExpDecayLR
PolynomialDecayLR WarmUpLR cosine_decay_lr exponential_decay_lr inverse_decay_lr
natural_exp_decay_lr piecewise_constant_lr polynomial_decay_lr warmup_lr CentralCrop
ImageGradients MSSSIM PSNR ResizeBilinear SSIM MatrixDiag MatrixDiagPart MatrixSetDiag
ClipByNorm Flatten L1Regularizer Norm OneHot Range Roll Tril Triu Moments
""".split()

TENSOR_METHODS = """
abs absolute acos add addbmm addcdiv addcmul addmm addmv addr adjoint all amax amin any angle
approximate_equal arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmax_with_value
argmin argmin_with_value asin asinh asnumpy assign_value astype atan atan2 atanh baddbmm
bernoulli bitwise_and bitwise_or bitwise_xor bmm bool broadcast_to ceil cholesky
cholesky_inverse choose clip col2im conj copy copysign cosh cross cummax cummin cumprod cumsum
deg2rad det diag diagonal div divide dtype equal erf erfc erfinv exp expand expand_as
expand_dims expm1 fill flatten flip fliplr flipud float floor flush_from_cache fold from_numpy
gather gather_elements gather_nd ge ger greater greater_equal gt half hardshrink has_init
heaviside hypot i0 igamma igammac index_add index_fill init_data inplace_update int inv invert
isclose isfinite is_floating_point isinf isnan is_signed item itemset itemsize lcm ldexp le lerp
less less_equal log log10 log2 logaddexp logaddexp2 logsumexp log1p logical_and logical_not
logical_or logical_xor logit long masked_fill masked_select max mean median min minimum multiply
narrow nbytes ndim ndimension negative nelement numel nonzero norm permute positive pow prod ptp
rad2deg random_categorical ravel remainder renorm repeat repeat_interleave reshape reshape_as
resize reverse reverse_sequence round roll rot90 scatter_add scatter_div scatter_max scatter_min
scatter_mul scatter_sub searchsorted select set_const_arg shape short sigmoid size soft_shrink
split sqrt square squeeze std strides sub subtract sum svd swapaxes T take tan tanh tile to
to_coo to_csr to_tensor top_k trace transpose triu true_divide unbind unfold unique_consecutive
unique_with_pad unsorted_segment_max unsorted_segment_min unsorted_segment_prod unsqueeze var
view xdivy xlogy
""".split()

CELL_METHODS = """
add_flags add_flags_recursive apply auto_cast_inputs auto_parallel_compile_and_run bprop_debug
cast_inputs cast_param cells cells_and_names check_names compile compile_and_run construct
exec_checkpoint_graph extend_repr flatten_weights generate_scope get_flags
get_func_graph_proto get_inputs get_parameters get_scope infer_param_pipeline_stage
init_parameters_data insert_child_to_cell insert_param_to_cell load_parameter_slice name_cells
param_prefix parameter_layout_dict parameters_and_names parameters_broadcast_dict
parameters_dict recompute register_backward_hook register_forward_hook
register_forward_pre_hook remove_redundant_parameters run_construct set_auto_parallel
set_boost set_broadcast_flag set_comm_fusion set_data_parallel set_grad set_inputs
set_jit_config set_parallel_input_with_inputs set_param_fl set_param_ps set_train shard
to_float trainable_params untrainable_params update_cell_prefix update_cell_type
update_parameters_name training
""".split()

PARAMETER_MEMBERS = """
cache_enable cache_shape clone comm_fusion data init_data inited_param key layerwise_parallel
name parallel_optimizer parallel_optimizer_comm_recompute requires_grad set_data set_param_fl
set_param_ps sliced unique
""".split()


def coverage():
    """``{list name: (names mindgrad has, names it lacks)}``."""
    import mindgrad
    from mindgrad import nn, ops

    cell = nn.Dense(2, 2)
    param = mindgrad.Parameter([1.0], name="p")
    where = {"TOP_LEVEL": (TOP_LEVEL, mindgrad), "OPS_FUNCTIONS": (OPS_FUNCTIONS, ops),
             "OPS_PRIMITIVES": (OPS_PRIMITIVES, ops), "NN": (NN, nn),
             "TENSOR_METHODS": (TENSOR_METHODS, mindgrad.Tensor([1.0])),
             "CELL_METHODS": (CELL_METHODS, cell), "PARAMETER_MEMBERS": (PARAMETER_MEMBERS, param)}
    result = {}
    for label, (names, owner) in where.items():
        have = [n for n in names if hasattr(owner, n)]
        result[label] = (have, [n for n in names if not hasattr(owner, n)])
    return result


if __name__ == "__main__":
    for label, (have, missing) in coverage().items():
        print(f"{label}: {len(have)} of {len(have) + len(missing)}")
        print("  missing:", " ".join(missing))
