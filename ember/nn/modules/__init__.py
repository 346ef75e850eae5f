"""Layers, one file per family (torch's module paths: ember.nn.modules.linear.Linear, ...)."""
from .activation import (  # noqa: F401
                        CELU,
                        ELU,
                        GELU,
                        GLU,
                        SELU,
                        Hardshrink,
                        Hardsigmoid,
                        Hardswish,
                        Hardtanh,
                        LeakyReLU,
                        LogSigmoid,
                        LogSoftmax,
                        Mish,
                        MultiheadAttention,  # noqa: F401
                        PReLU,
                        ReLU,
                        ReLU6,
                        RReLU,
                        Sigmoid,
                        SiLU,
                        Softmax,
                        Softmax2d,
                        Softmin,
                        Softplus,
                        Softshrink,
                        Softsign,
                        Tanh,
                        Tanhshrink,
                        Threshold,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .batchnorm import (  # noqa: F401
                        BatchNorm1d,
                        BatchNorm2d,
                        BatchNorm3d,
                        LazyBatchNorm1d,
                        LazyBatchNorm2d,
                        LazyBatchNorm3d,
                        SyncBatchNorm,
)
from .channelshuffle import ChannelShuffle  # noqa: F401
from .container import (  # noqa: F401
                        Container,
                        ModuleDict,
                        ModuleList,
                        ParameterDict,
                        ParameterList,
                        Sequential,
)
from .conv import (  # noqa: F401
                        Conv1d,
                        Conv2d,
                        Conv3d,
                        ConvTranspose1d,
                        ConvTranspose2d,
                        ConvTranspose3d,
                        LazyConv1d,
                        LazyConv2d,
                        LazyConv3d,
                        LazyConvTranspose1d,
                        LazyConvTranspose2d,
                        LazyConvTranspose3d,
)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .fold import Fold, Unfold  # noqa: F401
from .instancenorm import (  # noqa: F401
                        InstanceNorm1d,
                        InstanceNorm2d,
                        InstanceNorm3d,
                        LazyInstanceNorm1d,
                        LazyInstanceNorm2d,
                        LazyInstanceNorm3d,
)
from .linear import (  # noqa: F401
                        Bilinear,
                        Identity,
                        LazyLinear,
                        Linear,
                        NonDynamicallyQuantizableLinear,  # noqa: F401
)
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401
from .loss import (  # noqa: F401
                        BCELoss,
                        BCEWithLogitsLoss,
                        CosineEmbeddingLoss,
                        CrossEntropyLoss,
                        CTCLoss,
                        GaussianNLLLoss,
                        HingeEmbeddingLoss,
                        HuberLoss,
                        KLDivLoss,
                        L1Loss,
                        LinearCrossEntropyLoss,
                        MarginRankingLoss,
                        MSELoss,
                        MultiLabelMarginLoss,
                        MultiLabelSoftMarginLoss,
                        MultiMarginLoss,
                        NLLLoss,
                        NLLLoss2d,
                        PoissonNLLLoss,
                        SmoothL1Loss,
                        SoftMarginLoss,
                        TripletMarginLoss,
                        TripletMarginWithDistanceLoss,
)
from .module import Module  # noqa: F401
from .normalization import (  # noqa: F401
                        CrossMapLRN2d,
                        GroupNorm,
                        LayerNorm,
                        LocalResponseNorm,
                        RMSNorm,
)
from .padding import (  # noqa: F401
                        CircularPad1d,
                        CircularPad2d,
                        CircularPad3d,
                        ConstantPad1d,
                        ConstantPad2d,
                        ConstantPad3d,
                        ReflectionPad1d,
                        ReflectionPad2d,
                        ReflectionPad3d,
                        ReplicationPad1d,
                        ReplicationPad2d,
                        ReplicationPad3d,
                        ZeroPad1d,
                        ZeroPad2d,
                        ZeroPad3d,
)
from .pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from .pooling import (  # noqa: F401
                        AdaptiveAvgPool1d,
                        AdaptiveAvgPool2d,
                        AdaptiveAvgPool3d,
                        AdaptiveMaxPool1d,
                        AdaptiveMaxPool2d,
                        AdaptiveMaxPool3d,
                        AvgPool1d,
                        AvgPool2d,
                        AvgPool3d,
                        FractionalMaxPool2d,
                        FractionalMaxPool3d,
                        LPPool1d,
                        LPPool2d,
                        LPPool3d,
                        MaxPool1d,
                        MaxPool2d,
                        MaxPool3d,
                        MaxUnpool1d,
                        MaxUnpool2d,
                        MaxUnpool3d,
)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .transformer import (  # noqa: F401
                        Transformer,
                        TransformerDecoder,
                        TransformerDecoderLayer,
                        TransformerEncoder,
                        TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
