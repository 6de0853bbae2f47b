#!/usr/bin/env python3
"""Writes tiny TFLite models, one per operator family sentry's interpreter
runs, as the seed corpus of the model fuzzer (Fuzz/corpus/model). Each is a
real flatbuffer built with TFLite's own schema classes (ai-edge-litert) and
checked by running it in LiteRT, so the fuzzer starts from valid files.
"""
import pathlib
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.interpreter import Interpreter

OUT = pathlib.Path(__file__).resolve().parent.parent / "Fuzz/corpus/model"
B = schema.BuiltinOperator
O = schema.BuiltinOptions


def tensor(shape, buffer=0, dtype=schema.TensorType.FLOAT32, name="t"):
    t = schema.TensorT()
    t.shape, t.type, t.buffer, t.name = list(shape), dtype, buffer, name
    return t


def model(tensors, operators, codes, buffers, inputs, outputs):
    m = schema.ModelT()
    m.version = 3
    m.operatorCodes = []
    for code in codes:
        c = schema.OperatorCodeT()
        c.builtinCode, c.deprecatedBuiltinCode, c.version = code, min(code, 127), 1
        m.operatorCodes.append(c)
    g = schema.SubGraphT()
    g.tensors, g.operators, g.inputs, g.outputs = tensors, operators, inputs, outputs
    m.subgraphs = [g]
    m.buffers = []
    for data in [b""] + buffers:
        b = schema.BufferT()
        b.data = list(data) if data else None
        m.buffers.append(b)
    builder = flatbuffers.Builder(1024)
    builder.Finish(m.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def op(code_index, inputs, outputs, options_type=0, options=None):
    o = schema.OperatorT()
    o.opcodeIndex, o.inputs, o.outputs = code_index, inputs, outputs
    o.builtinOptionsType, o.builtinOptions = options_type, options
    return o


def conv_model():
    conv = schema.Conv2DOptionsT()
    conv.padding, conv.strideW, conv.strideH, conv.fusedActivationFunction = schema.Padding.SAME, 2, 2, 1
    weights = np.arange(2 * 3 * 3 * 1, dtype=np.float16).tobytes()
    bias = np.array([0.5, -0.5], np.float32).tobytes()
    tensors = [tensor([1, 4, 4, 1], name="in"), tensor([2, 3, 3, 1], 1, schema.TensorType.FLOAT16, "w16"),
               tensor([2, 3, 3, 1], name="w"), tensor([2], 2, name="b"), tensor([1, 2, 2, 2], name="out")]
    ops = [op(0, [1], [2]), op(1, [0, 2, 3], [4], O.Conv2DOptions, conv)]
    return model(tensors, ops, [B.DEQUANTIZE, B.CONV_2D], [weights, bias], [0], [4])


def depthwise_pool_model():
    dw = schema.DepthwiseConv2DOptionsT()
    dw.padding, dw.strideW, dw.strideH, dw.depthMultiplier = schema.Padding.VALID, 1, 1, 1
    pool = schema.Pool2DOptionsT()
    pool.padding, pool.strideW, pool.strideH, pool.filterWidth, pool.filterHeight = schema.Padding.VALID, 2, 2, 2, 2
    tensors = [tensor([1, 5, 5, 2], name="in"), tensor([1, 2, 2, 2], 1, name="w"), tensor([2], 2, name="b"),
               tensor([1, 4, 4, 2], name="dw"), tensor([1, 2, 2, 2], name="pool"), tensor([1, 2, 2, 2], name="relu")]
    ops = [op(0, [0, 1, 2], [3], O.DepthwiseConv2DOptions, dw), op(1, [3], [4], O.Pool2DOptions, pool), op(2, [4], [5])]
    return model(tensors, ops, [B.DEPTHWISE_CONV_2D, B.MAX_POOL_2D, B.RELU],
                 [np.ones(8, np.float32).tobytes(), np.zeros(2, np.float32).tobytes()], [0], [5])


def pad_add_resize_model():
    resize = schema.ResizeBilinearOptionsT()
    resize.alignCorners, resize.halfPixelCenters = False, False
    concat = schema.ConcatenationOptionsT()
    concat.axis = 3
    add = schema.AddOptionsT()
    reshape = schema.ReshapeOptionsT()
    reshape.newShape = [1, 32]
    tensors = [tensor([1, 2, 2, 1], name="in"), tensor([4, 2], 1, schema.TensorType.INT32, "pads"),
               tensor([1, 2, 2, 2], name="padded"), tensor([2], 2, schema.TensorType.INT32, "size"),
               tensor([1, 4, 4, 2], name="resized"), tensor([1, 4, 4, 2], name="sum"),
               tensor([1, 4, 4, 4], name="cat"), tensor([2], 3, schema.TensorType.INT32, "shape"),
               tensor([1, 64], name="flat")]
    ops = [op(0, [0, 1], [2]), op(1, [2, 3], [4], O.ResizeBilinearOptions, resize),
           op(2, [4, 4], [5], O.AddOptions, add), op(3, [4, 5], [6], O.ConcatenationOptions, concat),
           op(4, [6, 7], [8])]
    pads = np.array([0, 0, 0, 0, 0, 0, 0, 1], np.int32).tobytes()
    return model(tensors, ops, [B.PAD, B.RESIZE_BILINEAR, B.ADD, B.CONCATENATION, B.RESHAPE],
                 [pads, np.array([4, 4], np.int32).tobytes(), np.array([1, 64], np.int32).tobytes()], [0], [8])


def prelu_model():
    """A convolution, PRELU with one slope per channel (the face mesh's), and an ADD."""
    conv = schema.Conv2DOptionsT()
    conv.padding, conv.strideW, conv.strideH = schema.Padding.SAME, 1, 1
    add = schema.AddOptionsT()
    tensors = [tensor([1, 3, 3, 2], name="in"), tensor([2, 1, 1, 2], 1, name="w"), tensor([2], 3, name="b"),
               tensor([1, 3, 3, 2], name="conv"), tensor([1, 1, 2], 2, name="slopes"), tensor([1, 3, 3, 2], name="prelu"),
               tensor([1, 3, 3, 2], name="out")]
    ops = [op(0, [0, 1, 2], [3], O.Conv2DOptions, conv), op(1, [3, 4], [5]), op(2, [5, 0], [6], O.AddOptions, add)]
    return model(tensors, ops, [B.CONV_2D, B.PRELU, B.ADD],
                 [np.array([1, -2, -1, 3], np.float32).tobytes(), np.array([0.25, 0.5], np.float32).tobytes(),
                  np.array([0.5, -0.5], np.float32).tobytes()], [0], [6])


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in [("conv", conv_model), ("depthwise-pool", depthwise_pool_model), ("pad-add-resize", pad_add_resize_model),
                        ("prelu", prelu_model)]:
        data = build()
        interpreter = Interpreter(model_content=data)
        interpreter.allocate_tensors()
        detail = interpreter.get_input_details()[0]
        interpreter.set_tensor(detail["index"], np.ones(detail["shape"], np.float32))
        interpreter.invoke()
        (OUT / f"{name}.tflite").write_bytes(data)
        print(f"{name}.tflite: {len(data)} bytes, runs in LiteRT")


if __name__ == "__main__":
    sys.exit(main())
