import Glibc
import struct Foundation.Data
import ProcessThreads
import Testing
import Waiting
@testable import TFLite

/// Each operator on small tensors whose results are worked out by hand.
@Suite("TFLite operators")
struct OperatorTests {
    /// A one-operator graph: tensor 0 is the input, the last tensor the output, the rest constants.
    static func model(_ operation: Operation, input: [Int], constants: [TensorDescription] = [], output: [Int]) -> TFLiteModel {
        var tensors = [TensorDescription(name: "input", shape: input, type: .float32)]
        tensors += constants
        tensors.append(TensorDescription(name: "output", shape: output, type: .float32))
        let op = OperatorDescription(operation: operation, inputs: Array(0..<tensors.count - 1), outputs: [tensors.count - 1])
        return TFLiteModel(tensors: tensors, operators: [op], inputs: [0], outputs: [tensors.count - 1])
    }

    /// Runs the one-operator graph of `model(...)` on `values`.
    static func run(
        _ operation: Operation, input: [Int], _ values: [Float], constants: [TensorDescription] = [],
        output: [Int], threads: Int = 1
    ) throws -> [Float] {
        let model = Self.model(operation, input: input, constants: constants, output: output)
        let interpreter = try Interpreter(model: model, path: "test", threads: threads)
        for (index, value) in values.enumerated() { interpreter.input[index] = value }
        interpreter.invoke()
        return Array(interpreter.output(0))
    }

    static func floats(_ name: String, _ shape: [Int], _ values: [Float]) -> TensorDescription {
        TensorDescription(
            name: name, shape: shape, type: .float32,
            data: ArraySlice(values.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian, Array.init) }))
    }

    static func integers(_ name: String, _ shape: [Int], _ values: [Int32]) -> TensorDescription {
        TensorDescription(
            name: name, shape: shape, type: .int32,
            data: ArraySlice(values.flatMap { withUnsafeBytes(of: $0.littleEndian, Array.init) }))
    }

    @Test("fp16 to fp32: normal, subnormal, zero, negative, infinity")
    func halfFloats() {
        #expect(floatFromHalf(0x3C00) == 1)
        #expect(floatFromHalf(0xC000) == -2)
        #expect(floatFromHalf(0x3555) == 0.333251953125)
        #expect(floatFromHalf(0x0001) == 0x1p-24)
        #expect(floatFromHalf(0x8000) == 0 && floatFromHalf(0x8000).sign == .minus)
        #expect(floatFromHalf(0x7C00) == .infinity)
        #expect(floatFromHalf(0x7E00).isNaN)
    }

    @Test("CONV_2D 3x3, stride 2, SAME pads only after on an even input (TFLite's rule)")
    func convolutionSameStride2() throws {
        // 4x4 input 1..16, one channel; all-ones kernel; output 2x2.
        // SAME, stride 2: pad total 1, before 0, after 1. Output (0,0) sums rows 0-2, cols 0-2.
        let input = (1...16).map(Float.init)
        let filter = Self.floats("filter", [1, 3, 3, 1], Array(repeating: 1, count: 9))
        let bias = Self.floats("bias", [1], [0.5])
        let out = try Self.run(
            .conv2D(Window(padding: .same, strideX: 2, strideY: 2), .none), input: [1, 4, 4, 1], input,
            constants: [filter, bias], output: [1, 2, 2, 1])
        // (0,0): 1+2+3+5+6+7+9+10+11 = 54; (0,1): cols 2-3: 3+4+7+8+11+12 = 45;
        // (1,0): rows 2-3: 9+10+11+13+14+15 = 72; (1,1): 11+12+15+16 = 54.
        #expect(out == [54.5, 45.5, 72.5, 54.5])
    }

    @Test("CONV_2D VALID, two input and three output channels, fused RELU")
    func convolutionChannels() throws {
        // 1x2 input, 2 channels: pixel0 = (1, 2), pixel1 = (3, 4); 1x1 kernels.
        let filter = Self.floats("filter", [3, 1, 1, 2], [1, 0, 0, 1, -1, -1])
        let out = try Self.run(
            .conv2D(Window(padding: .valid, strideX: 1, strideY: 1), .relu), input: [1, 1, 2, 2], [1, 2, 3, 4],
            constants: [filter, Self.floats("bias", [3], [0, 0, 1])], output: [1, 1, 2, 3])
        #expect(out == [1, 2, 0, 3, 4, 0])
    }

    @Test("DEPTHWISE_CONV_2D with multiplier 2: output channel c reads input channel c / 2")
    func depthwiseMultiplier() throws {
        // 1x1 input with channels (2, 3); 1x1 kernel with weights for 4 output channels.
        let filter = Self.floats("filter", [1, 1, 1, 4], [1, 10, 100, 1000])
        let out = try Self.run(
            .depthwiseConv2D(Window(padding: .valid, strideX: 1, strideY: 1), multiplier: 2, .none),
            input: [1, 1, 1, 2], [2, 3], constants: [filter, Self.floats("bias", [4], [0, 0, 0, 1])],
            output: [1, 1, 1, 4])
        #expect(out == [2, 20, 300, 3001])
    }

    @Test("DEPTHWISE_CONV_2D 3x3 SAME stride 1 over 9 channels: inside, borders and the channel tail agree")
    func depthwiseBorders() throws {
        // 3x3 input, 9 channels, channel c of every pixel = c + 1; all-ones kernel.
        let channels = 9
        let input = (0..<9).flatMap { _ in (0..<channels).map { Float($0 + 1) } }
        let filter = Self.floats("filter", [1, 3, 3, channels], Array(repeating: 1, count: 9 * channels))
        let out = try Self.run(
            .depthwiseConv2D(Window(padding: .same, strideX: 1, strideY: 1), multiplier: 1, .none),
            input: [1, 3, 3, channels], input,
            constants: [filter, Self.floats("bias", [channels], Array(repeating: 0, count: channels))],
            output: [1, 3, 3, channels])
        // Taps inside the input per output pixel: corners 4, edges 6, centre 9.
        let taps: [Float] = [4, 6, 4, 6, 9, 6, 4, 6, 4]
        #expect(out == taps.flatMap { count in (0..<channels).map { count * Float($0 + 1) } })
    }

    /// A value that differs from pixel to pixel and channel to channel.
    static func pattern(_ index: Int) -> Float { Float((index * 7919) % 211) / 50 - 2 }

    /// TFLite's SAME convolution written the plain way: output pixel, channel, window.
    static func reference(
        input: [Float], height: Int, width: Int, inputChannels: Int, filter: [Float], kernel: Int,
        stride: Int, outputChannels: Int, depthwise: Bool
    ) -> [Float] {
        let outputHeight = (height + stride - 1) / stride, outputWidth = (width + stride - 1) / stride
        let padTop = max((outputHeight - 1) * stride + kernel - height, 0) / 2
        let padLeft = max((outputWidth - 1) * stride + kernel - width, 0) / 2
        var out: [Float] = []
        for y in 0..<outputHeight {
            for x in 0..<outputWidth {
                for o in 0..<outputChannels {
                    var sum: Float = 0
                    for ky in 0..<kernel {
                        for kx in 0..<kernel {
                            let iy = y * stride - padTop + ky, ix = x * stride - padLeft + kx
                            guard (0..<height).contains(iy), (0..<width).contains(ix) else { continue }
                            let pixel = (iy * width + ix) * inputChannels
                            if depthwise {
                                sum += input[pixel + o] * filter[(ky * kernel + kx) * outputChannels + o]
                            } else {
                                for k in 0..<inputChannels {
                                    sum += input[pixel + k] * filter[((o * kernel + ky) * kernel + kx) * inputChannels + k]
                                }
                            }
                        }
                    }
                    out.append(sum)
                }
            }
        }
        return out
    }

    @Test(
        """
        DEPTHWISE_CONV_2D 3x3 SAME, stride 1 and 2, on 13x11, 12x10 and 16x6 with 19 channels (groups of eight, \
        then the last pixels as a group of four or eight overlapping the one before) and on 101x5 with 37 (rows \
        too wide for L1, taken a span of columns at a time): the register path, borders and channel tail included, \
        agrees with the plain sum
        """,
        arguments: [1, 2], [(height: 11, width: 13, channels: 19), (10, 12, 19), (6, 16, 19), (5, 101, 37)])
    func depthwiseInside(stride: Int, shape: (height: Int, width: Int, channels: Int)) throws {
        let (height, width, channels) = shape
        if width > 100 {
            let geometry = WindowGeometry(
                inputWidth: width, inputHeight: height,
                window: Window(padding: .same, strideX: stride, strideY: stride, width: 3, height: 3))
            #expect(DepthwiseConv2D.depthwiseSpan(channels: channels, geometry: geometry) < geometry.outputWidth / 2)
        }
        let input = (0..<height * width * channels).map(Self.pattern)
        let filter = (0..<9 * channels).map { Self.pattern($0 + 5) }
        let outputHeight = (height + stride - 1) / stride, outputWidth = (width + stride - 1) / stride
        let out = try Self.run(
            .depthwiseConv2D(Window(padding: .same, strideX: stride, strideY: stride), multiplier: 1, .none),
            input: [1, height, width, channels], input,
            constants: [
                Self.floats("filter", [1, 3, 3, channels], filter),
                Self.floats("bias", [channels], Array(repeating: 0, count: channels)),
            ],
            output: [1, outputHeight, outputWidth, channels])
        let expected = Self.reference(
            input: input, height: height, width: width, inputChannels: channels, filter: filter,
            kernel: 3, stride: stride, outputChannels: channels, depthwise: true)
        #expect(zip(out, expected).allSatisfy { abs($0 - $1) <= 1e-4 })
    }

    @Test("CONV_2D 5x5 SAME stride 2, 3 to 24 channels on 16x14 (BlazeFace's first layer): the two-pixel path agrees with the plain sum")
    func convolutionPairs() throws {
        let (height, width, inputChannels, outputChannels) = (14, 16, 3, 24)
        let input = (0..<height * width * inputChannels).map(Self.pattern)
        let filter = (0..<outputChannels * 25 * inputChannels).map { Self.pattern($0 + 11) }
        let out = try Self.run(
            .conv2D(Window(padding: .same, strideX: 2, strideY: 2), .none),
            input: [1, height, width, inputChannels], input,
            constants: [
                Self.floats("filter", [outputChannels, 5, 5, inputChannels], filter),
                Self.floats("bias", [outputChannels], Array(repeating: 0, count: outputChannels)),
            ],
            output: [1, 7, 8, outputChannels])
        let expected = Self.reference(
            input: input, height: height, width: width, inputChannels: inputChannels, filter: filter,
            kernel: 5, stride: 2, outputChannels: outputChannels, depthwise: false)
        #expect(zip(out, expected).allSatisfy { abs($0 - $1) <= 1e-3 })
    }

    @Test(
        """
        CONV_2D 2x2 stride 2 and 3x3 stride 3, 19 to 21 channels, then a PRELU: windows that tile the input run as \
        a matrix product, the PRELU fused into it; on an odd input the padded last row and column run the general \
        kernel beside it; both agree with the plain sum on one and two threads
        """,
        arguments: [(kernel: 2, height: 12, width: 10), (2, 11, 9), (3, 12, 9)], [1, 2])
    func tiledConvolution(shape: (kernel: Int, height: Int, width: Int), threads: Int) throws {
        let (kernel, height, width) = shape
        let (inputChannels, outputChannels) = (19, 21)
        let input = (0..<height * width * inputChannels).map(Self.pattern)
        let filter = (0..<outputChannels * kernel * kernel * inputChannels).map { Self.pattern($0 + 3) }
        let slopes = (0..<outputChannels).map { Float($0) / 8 - 1 }
        let outputShape = [1, (height + kernel - 1) / kernel, (width + kernel - 1) / kernel, outputChannels]
        let tensors = [
            TensorDescription(name: "input", shape: [1, height, width, inputChannels], type: .float32),
            Self.floats("filter", [outputChannels, kernel, kernel, inputChannels], filter),
            Self.floats("bias", [outputChannels], Array(repeating: 0.5, count: outputChannels)),
            TensorDescription(name: "sums", shape: outputShape, type: .float32),
            Self.floats("slopes", [1, 1, outputChannels], slopes),
            TensorDescription(name: "output", shape: outputShape, type: .float32),
        ]
        let window = Window(padding: .same, strideX: kernel, strideY: kernel, width: kernel, height: kernel)
        let model = TFLiteModel(
            tensors: tensors,
            operators: [
                OperatorDescription(operation: .conv2D(window, .none), inputs: [0, 1, 2], outputs: [3]),
                OperatorDescription(operation: .prelu, inputs: [3, 4], outputs: [5]),
            ],
            inputs: [0], outputs: [5])
        let interpreter = try Interpreter(model: model, path: "test", threads: threads)
        #expect(interpreter.stepTimings(runs: 1).map(\.operation) == ["CONV_2D \(kernel)x\(kernel)/\(kernel) + PRELU"])
        for (index, value) in input.enumerated() { interpreter.input[index] = value }
        interpreter.invoke()
        let expected = Self.reference(
            input: input, height: height, width: width, inputChannels: inputChannels, filter: filter,
            kernel: kernel, stride: kernel, outputChannels: outputChannels, depthwise: false
        ).enumerated().map { index, sum in
            let value = sum + 0.5
            return value < 0 ? value * slopes[index % outputChannels] : value
        }
        let output = Array(interpreter.output(0))
        #expect(output.count == expected.count)
        #expect(zip(output, expected).allSatisfy { abs($0 - $1) <= 1e-3 })
    }

    @Test("MAX_POOL_2D 2x2 stride 2 SAME on 7x5 with 19 channels: the vector path, border and channel tail included, agrees with the plain maximum")
    func maxPoolChannels() throws {
        let (height, width, channels) = (5, 7, 19)
        let input = (0..<height * width * channels).map(Self.pattern)
        let out = try Self.run(
            .maxPool2D(Window(padding: .same, strideX: 2, strideY: 2, width: 2, height: 2), .none),
            input: [1, height, width, channels], input, output: [1, 3, 4, channels])
        var expected: [Float] = []
        for y in 0..<3 {
            for x in 0..<4 {
                for c in 0..<channels {
                    let cells = [(0, 0), (0, 1), (1, 0), (1, 1)].map { (2 * y + $0.0, 2 * x + $0.1) }
                        .filter { $0.0 < height && $0.1 < width }
                    expected.append(cells.map { input[($0.0 * width + $0.1) * channels + c] }.max()!)
                }
            }
        }
        #expect(out == expected)
    }

    @Test("a first convolution on equal input channels folds to one channel: same results up to rounding; an input also read by another operator is kept")
    func identicalInputChannels() throws {
        let (height, width, outputChannels) = (9, 8, 12)
        let gray = (0..<height * width).map(Self.pattern)
        let filter = (0..<outputChannels * 9 * 3).map { Self.pattern($0 + 13) }
        func model(alsoRead: Bool) -> TFLiteModel {
            var tensors = [
                TensorDescription(name: "input", shape: [1, height, width, 3], type: .float32),
                Self.floats("filter", [outputChannels, 3, 3, 3], filter),
                Self.floats("bias", [outputChannels], Array(repeating: 0.5, count: outputChannels)),
                TensorDescription(name: "output", shape: [1, 5, 4, outputChannels], type: .float32),
            ]
            var operators = [
                OperatorDescription(
                    operation: .conv2D(Window(padding: .same, strideX: 2, strideY: 2), .relu),
                    inputs: [0, 1, 2], outputs: [3])
            ]
            if alsoRead {
                tensors.append(TensorDescription(name: "copy", shape: [1, height, width, 3], type: .float32))
                operators.append(OperatorDescription(operation: .relu, inputs: [0], outputs: [4]))
            }
            return TFLiteModel(tensors: tensors, operators: operators, inputs: [0], outputs: alsoRead ? [3, 4] : [3])
        }
        let plain = try Interpreter(model: model(alsoRead: false), path: "test")
        let folded = try Interpreter(model: model(alsoRead: false), path: "test", identicalInputChannels: true)
        #expect(plain.inputShape == [1, height, width, 3] && folded.inputShape == [1, height, width, 1])
        for (index, value) in gray.enumerated() {
            for channel in 0..<3 { plain.input[index * 3 + channel] = value }
            folded.input[index] = value
        }
        plain.invoke()
        folded.invoke()
        #expect(zip(plain.output(0), folded.output(0)).allSatisfy { abs($0 - $1) <= 1e-4 })
        #expect(try Interpreter(model: model(alsoRead: true), path: "test", identicalInputChannels: true).inputShape[3] == 3)
    }

    @Test("MAX_POOL_2D 2x2 stride 2 VALID")
    func maxPool() throws {
        let out = try Self.run(
            .maxPool2D(Window(padding: .valid, strideX: 2, strideY: 2, width: 2, height: 2), .none),
            input: [1, 2, 4, 1], [1, 5, 2, 0, -3, 4, 9, 8], output: [1, 1, 2, 1])
        #expect(out == [5, 9])
    }

    @Test("PAD adds zero channels after the input's (BlazeFace's residual widening)")
    func pad() throws {
        let paddings = Self.integers("paddings", [4, 2], [0, 0, 1, 0, 0, 0, 0, 2])
        let out = try Self.run(.pad, input: [1, 1, 2, 1], [7, 8], constants: [paddings], output: [1, 2, 2, 3])
        #expect(out == [0, 0, 0, 0, 0, 0, 7, 0, 0, 8, 0, 0])
    }

    /// BlazeFace's residual block on an 8x9 input (or `map`): `relu(conv1x1(x) + pad(x))`, the PAD widening
    /// `inputChannels` to `outputChannels` (none when equal); with `shared`, the convolution's result
    /// is also a graph output, so nothing may be folded.
    static func residualBlock(
        inputChannels: Int, outputChannels: Int, map: (height: Int, width: Int) = (8, 9),
        shared: Bool = false, threads: Int = 1
    ) throws
        -> (plan: Planner.Plan, out: [Float], expected: [Float], interpreter: Interpreter)
    {
        let (height, width) = map
        let input = (0..<height * width * inputChannels).map(Self.pattern)
        let filter = (0..<outputChannels * inputChannels).map { Self.pattern($0 + 3) }
        let bias = (0..<outputChannels).map { Self.pattern($0 + 7) }
        let widened = outputChannels > inputChannels
        var tensors = [
            TensorDescription(name: "x", shape: [1, height, width, inputChannels], type: .float32),
            Self.floats("filter", [outputChannels, 1, 1, inputChannels], filter),
            Self.floats("bias", [outputChannels], bias),
            TensorDescription(name: "sum", shape: [1, height, width, outputChannels], type: .float32),
        ]
        var operators = [
            OperatorDescription(
                operation: .conv2D(Window(padding: .same, strideX: 1, strideY: 1), .none),
                inputs: [0, 1, 2], outputs: [3])
        ]
        var residual = 0
        if widened {
            tensors += [
                Self.integers("paddings", [4, 2], [0, 0, 0, 0, 0, 0, 0, Int32(outputChannels - inputChannels)]),
                TensorDescription(name: "padded", shape: [1, height, width, outputChannels], type: .float32),
            ]
            operators.append(OperatorDescription(operation: .pad, inputs: [0, 4], outputs: [5]))
            residual = 5
        }
        tensors.append(TensorDescription(name: "out", shape: [1, height, width, outputChannels], type: .float32))
        operators.append(OperatorDescription(operation: .add(.relu), inputs: [residual, 3], outputs: [tensors.count - 1]))
        let model = TFLiteModel(
            tensors: tensors, operators: operators, inputs: [0],
            outputs: [tensors.count - 1] + (shared ? [3] : []))
        var planner = Planner(model: model, path: "test")
        let interpreter = try Interpreter(model: model, path: "test", threads: threads)
        for (index, value) in input.enumerated() { interpreter.input[index] = value }
        interpreter.invoke()
        var expected: [Float] = []
        for pixel in 0..<height * width {
            for o in 0..<outputChannels {
                var sum = bias[o]
                for k in 0..<inputChannels { sum += input[pixel * inputChannels + k] * filter[o * inputChannels + k] }
                expected.append(max(0, sum + (o < inputChannels ? input[pixel * inputChannels + o] : 0)))
            }
        }
        return (try planner.plan(), Array(interpreter.output(0)), expected, interpreter)
    }

    @Test(
        """
        a 1x1 convolution, a channel PAD and the ADD of both run as one step that agrees with the plain sum, \
        on 8x9 pixels and on 7x5 (an odd count: the last pixel of a 32-channel pass alone); past 128 input \
        channels, four pixels by sixteen channels at a time
        """,
        arguments: [(24, 28), (10, 12), (32, 48), (16, 16), (20, 24), (4, 8), (8, 8), (40, 72), (136, 144)])
    func residualFused(channels: (input: Int, output: Int)) throws {
        for map in [(height: 8, width: 9), (7, 5)] {
            let block = try Self.residualBlock(inputChannels: channels.input, outputChannels: channels.output, map: map)
            #expect(block.plan.steps.count == 1)
            #expect(zip(block.out, block.expected).allSatisfy { abs($0 - $1) <= 1e-4 })
        }
    }

    @Test("two threads share a 1x1 convolution with more channels than pixels by channel blocks: the same values as one thread")
    func pointwiseSplitByChannels() throws {
        let one = try Self.residualBlock(inputChannels: 24, outputChannels: 160, map: (12, 13))
        let two = try Self.residualBlock(inputChannels: 24, outputChannels: 160, map: (12, 13), threads: 2)
        #expect(PointwiseConv2D.splitsChannels(pixels: 156, outputChannels: 160) && 156 * 24 * 160 >= Interpreter.splitWork)
        #expect(156 >= Interpreter.smallestSharedOutput)
        #expect(two.out == one.out)
        #expect(zip(two.out, two.expected).allSatisfy { abs($0 - $1) <= 1e-4 })
    }

    @Test("a convolution on an 8x8 map runs on the caller alone, its helper parked; on a 12x12 map the helper is woken for it")
    func smallMapsStayOnTheCaller() throws {
        var helperNanoseconds: [Int: Int] = [:], helperSleeps: [Int: Int] = [:]
        for side in [8, 12] {
            let (inputChannels, outputChannels) = (384, 96)
            let constants = [
                Self.floats("filter", [outputChannels, 1, 1, inputChannels], (0..<outputChannels * inputChannels).map(Self.pattern)),
                Self.floats("bias", [outputChannels], (0..<outputChannels).map(Self.pattern)),
            ]
            let model = Self.model(
                .conv2D(Window(padding: .same, strideX: 1, strideY: 1), .none), input: [1, side, side, inputChannels],
                constants: constants, output: [1, side, side, outputChannels])
            let interpreter = try Interpreter(model: model, path: "test", threads: 2)
            let pool = try #require(interpreter.pool)
            #expect(eventually { !pool.helperThreads.withLock(\.isEmpty) })
            interpreter.invoke()
            let (cpuBefore, sleepsBefore) = (try Self.cpuNanoseconds(of: pool), try Self.sleeps(of: pool))
            // A frame's gap after each run, until a woken helper has gone back to sleep: 200 runs,
            // and where the helper is woken, on until it has slept 20 times (a host whose cores
            // other tests keep busy kept it off them for all of 200 runs once).
            var runs = 0
            repeat {
                interpreter.invoke()
                #expect(eventually(lookingEvery: 0.0001) { pool.parkedHelpers == pool.helpers })
                runs += 1
            } while try runs < 200 || (side == 12 && runs < 20_000 && Self.sleeps(of: pool) - sleepsBefore < 20)
            helperNanoseconds[side] = try Self.cpuNanoseconds(of: pool) - cpuBefore
            helperSleeps[side] = try Self.sleeps(of: pool) - sleepsBefore
        }
        // Big enough to share on either map (on 8x8, 6 blocks of 16 output channels; two million multiply-adds).
        #expect(64 * 384 * 96 >= Interpreter.splitWork && PointwiseConv2D.splitsChannels(pixels: 64, outputChannels: 96))
        #expect(64 < Interpreter.smallestSharedOutput && 144 >= Interpreter.smallestSharedOutput)
        // Parked all along, the helper is never woken (0 ns, no sleep here); sharing, it is woken
        // for each run and sleeps again after it (200 times in 200 runs, 15-23 ms of CPU; with
        // every core busy with other tests it may wake too late for a part, but it still wakes).
        #expect(helperNanoseconds[8, default: -1] < 50_000, "\(helperNanoseconds)")
        #expect(helperSleeps[8, default: -1] <= 2, "\(helperSleeps)")
        #expect(helperSleeps[12, default: 0] >= 20, "\(helperSleeps)")
        #expect(helperNanoseconds[12, default: 0] > helperNanoseconds[8, default: 0], "\(helperNanoseconds)")
    }

    /// Nanoseconds the pool's helper threads have run.
    static func cpuNanoseconds(of pool: WorkerPool) throws -> Int {
        try pool.helperThreads.withLock { $0 }.reduce(0) { try $0 + ProcessThreads.cpuNanoseconds(thread: Int($1)) }
    }

    /// Times the pool's helper threads have gone to sleep.
    static func sleeps(of pool: WorkerPool) throws -> Int {
        try pool.helperThreads.withLock { $0 }.reduce(0) { try $0 + ProcessThreads.waits(thread: Int($1)) }
    }

    /// A depthwise 3x3 convolution over 24x20x16 and then `second`: a 1x1 convolution to 12
    /// channels, or another depthwise 3x3.
    static func depthwiseThen(pointwise: Bool) -> TFLiteModel {
        let (height, width, channels) = (24, 20, 16)
        let same = Window(padding: .same, strideX: 1, strideY: 1)
        let tensors = [
            TensorDescription(name: "x", shape: [1, height, width, channels], type: .float32),
            Self.floats("dw", [1, 3, 3, channels], (0..<9 * channels).map { Self.pattern($0 + 1) }),
            Self.floats("dw bias", [channels], (0..<channels).map { Self.pattern($0 + 2) }),
            TensorDescription(name: "t", shape: [1, height, width, channels], type: .float32),
            pointwise
                ? Self.floats("pw", [12, 1, 1, channels], (0..<12 * channels).map { Self.pattern($0 + 3) })
                : Self.floats("dw2", [1, 3, 3, channels], (0..<9 * channels).map { Self.pattern($0 + 3) }),
            Self.floats("bias", [pointwise ? 12 : channels], (0..<(pointwise ? 12 : channels)).map { Self.pattern($0 + 4) }),
            TensorDescription(name: "out", shape: [1, height, width, pointwise ? 12 : channels], type: .float32),
        ]
        let operators = [
            OperatorDescription(operation: .depthwiseConv2D(same, multiplier: 1, .none), inputs: [0, 1, 2], outputs: [3]),
            OperatorDescription(
                operation: pointwise ? .conv2D(same, .none) : .depthwiseConv2D(same, multiplier: 1, .none),
                inputs: [3, 4, 5], outputs: [6]),
        ]
        return TFLiteModel(tensors: tensors, operators: operators, inputs: [0], outputs: [6])
    }

    @Test("a depthwise convolution and the 1x1 after it share rows: each thread runs its rows through both, with the values of the two apart")
    func depthwiseAndPointwiseShareRows() throws {
        let model = Self.depthwiseThen(pointwise: true)
        var planner = Planner(model: model, path: "test")
        let plan = try planner.plan()
        #expect(plan.steps.map(\.joinsPrevious) == [false, true])
        // The 1x1 writes nowhere the depthwise reads: another thread may still be reading
        // the rows around its part when this one writes.
        guard case .arena(let input) = plan.steps[0].inputs[0], case .arena(let output) = plan.steps[1].output else {
            Issue.record("tensors outside the arena")
            return
        }
        #expect(!(input..<input + 24 * 20 * 16).overlaps(output..<output + 24 * 20 * 12))

        let x = (0..<24 * 20 * 16).map(Self.pattern)
        let depthwise = Self.reference(
            input: x, height: 24, width: 20, inputChannels: 16,
            filter: (0..<9 * 16).map { Self.pattern($0 + 1) }, kernel: 3, stride: 1,
            outputChannels: 16, depthwise: true)
        let t = depthwise.enumerated().map { $0.element + Self.pattern($0.offset % 16 + 2) }
        let expected = Self.reference(
            input: t, height: 24, width: 20, inputChannels: 16,
            filter: (0..<12 * 16).map { Self.pattern($0 + 3) }, kernel: 1, stride: 1,
            outputChannels: 12, depthwise: false
        )
        .enumerated().map { $0.element + Self.pattern($0.offset % 12 + 4) }
        var outputs: [[Float]] = []
        for threads in [1, 2] {
            let interpreter = try Interpreter(model: model, path: "test", threads: threads)
            for _ in 0..<20 {
                _ = interpreter.input.update(fromContentsOf: x)
                interpreter.invoke()
                outputs.append(Array(interpreter.output(0)))
            }
        }
        #expect(outputs.allSatisfy { $0 == outputs[0] })
        #expect(zip(outputs[0], expected).allSatisfy { abs($0 - $1) <= 1e-4 })
    }

    @Test("a depthwise convolution after another does not share its rows: it reads the rows around them")
    func depthwiseAfterDepthwiseWaits() throws {
        var planner = Planner(model: Self.depthwiseThen(pointwise: false), path: "test")
        #expect(try planner.plan().steps.map(\.joinsPrevious) == [false, false])
    }

    @Test("a residual block whose PAD lacks its paddings, or whose ADD lacks an input, is a model error, not a crash")
    func residualMalformed() throws {
        for (padInputs, addInputs) in [([0], [4, 3]), ([0, 5], [-1, 3]), ([0, 5], [3, -1])] {
            let tensors = [
                TensorDescription(name: "x", shape: [1, 2, 2, 8], type: .float32),
                Self.floats("filter", [16, 1, 1, 8], Array(repeating: 1, count: 128)),
                Self.floats("bias", [16], Array(repeating: 0, count: 16)),
                TensorDescription(name: "sum", shape: [1, 2, 2, 16], type: .float32),
                TensorDescription(name: "padded", shape: [1, 2, 2, 16], type: .float32),
                Self.integers("paddings", [4, 2], [0, 0, 0, 0, 0, 0, 0, 8]),
                TensorDescription(name: "out", shape: [1, 2, 2, 16], type: .float32),
            ]
            let operators = [
                OperatorDescription(
                    operation: .conv2D(Window(padding: .same, strideX: 1, strideY: 1), .none),
                    inputs: [0, 1, 2], outputs: [3]),
                OperatorDescription(operation: .pad, inputs: padInputs, outputs: [4]),
                OperatorDescription(operation: .add(.relu), inputs: addInputs, outputs: [6]),
            ]
            let model = TFLiteModel(tensors: tensors, operators: operators, inputs: [0], outputs: [6])
            #expect(throws: ModelError.self) { try Interpreter(model: model, path: "test") }
        }
    }

    @Test("a model of more operators than sentry runs is a model error naming the limit, on two threads as on one; at the limit it runs")
    func tooManyOperators() throws {
        func chain(of count: Int) -> TFLiteModel {
            let tensors = (0...count).map { TensorDescription(name: "t\($0)", shape: [1, 4], type: .float32) }
            let operators = (0..<count).map { OperatorDescription(operation: .relu, inputs: [$0], outputs: [$0 + 1]) }
            return TFLiteModel(tensors: tensors, operators: operators, inputs: [0], outputs: [count])
        }
        for threads in [1, 2] {
            let error = #expect(throws: ModelError.self) {
                try Interpreter(model: chain(of: Planner.maximumOperators + 1), path: "big.tflite", threads: threads)
            }
            #expect(error?.description.contains("at most \(Planner.maximumOperators)") == true, "\(String(describing: error))")
            let interpreter = try Interpreter(model: chain(of: Planner.maximumOperators), path: "big.tflite", threads: threads)
            for index in 0..<4 { interpreter.input[index] = Float(index) - 2 }
            interpreter.invoke()
            #expect(Array(interpreter.output(0)) == [0, 0, 0, 1])
        }
    }

    @Test("step timings name every step of a run, count its multiply-adds and leave the input as it was")
    func stepTimings() throws {
        for (shared, operations) in [(false, ["CONV_2D 1x1 + ADD"]), (true, ["CONV_2D 1x1", "PAD", "ADD"])] {
            let interpreter = try Self.residualBlock(inputChannels: 10, outputChannels: 12, shared: shared).interpreter
            let input = Array(interpreter.input)
            let timings = interpreter.stepTimings(runs: 3)
            #expect(timings.map(\.operation) == operations)
            #expect(timings.allSatisfy { $0.seconds > 0 } && timings[0].work == 8 * 9 * 10 * 12)
            #expect(Array(interpreter.input) == input)
        }
    }

    @Test("tensors start on 32-byte boundaries (the arena on a cache line), so no eight-float load splits a line, whatever malloc hands out")
    func alignedTensors() throws {
        // A large arena (malloc would map it and start it 16 bytes into a page), several
        // alive at once and one after another (malloc's choices change as blocks are freed).
        let constant = Self.floats("other", [1, 100, 100, 8], Array(repeating: 1, count: 80_000))
        let model = Self.model(.add(.none), input: [1, 100, 100, 8], constants: [constant], output: [1, 100, 100, 8])
        for _ in 0..<3 {
            let interpreters = try (0..<3).map { _ in try Interpreter(model: model, path: "test") }
            for interpreter in interpreters {
                #expect(Int(bitPattern: interpreter.input.baseAddress) % 32 == 0)
                #expect(Int(bitPattern: interpreter.output(0).baseAddress) % 32 == 0)
            }
        }
    }

    @Test("a convolution whose result is read elsewhere too is not folded into the ADD")
    func residualShared() throws {
        let block = try Self.residualBlock(inputChannels: 10, outputChannels: 12, shared: true)
        #expect(block.plan.steps.count == 3)
        #expect(zip(block.out, block.expected).allSatisfy { abs($0 - $1) <= 1e-4 })
    }

    @Test("ADD with fused RELU; RELU alone")
    func addAndRelu() throws {
        let other = Self.floats("other", [1, 1, 1, 3], [1, -5, 0.5])
        #expect(try Self.run(.add(.relu), input: [1, 1, 1, 3], [1, 2, -3], constants: [other], output: [1, 1, 1, 3]) == [2, 0, 0])
        #expect(try Self.run(.relu, input: [1, 4], [-1, 0, 2, -0.5], output: [1, 4]) == [0, 0, 2, 0])
    }

    @Test("PRELU over 11 channels on two threads: negative values times their channel's slope, the channel tail included")
    func prelu() throws {
        let channels = 11
        let slopes = (0..<channels).map { Float($0) / 4 - 1 }
        let values = (0..<3 * 5 * channels).map { Float(($0 * 7) % 13) - 6 }
        let expected = values.enumerated().map { index, value in value < 0 ? value * slopes[index % channels] : value }
        for threads in [1, 2] {
            let output = try Self.run(
                .prelu, input: [1, 3, 5, channels], values, constants: [Self.floats("slopes", [1, 1, channels], slopes)],
                output: [1, 3, 5, channels], threads: threads)
            #expect(output == expected)
        }
        #expect(throws: ModelError.self) {
            try Self.run(
                .prelu, input: [1, 1, 1, 3], [1, 2, 3], constants: [Self.floats("slopes", [2], [1, 2])], output: [1, 1, 1, 3])
        }
    }

    @Test("RESIZE_BILINEAR of 11 channels, half-pixel centres: eight channels at a time give what TFLite's formula gives, channel by channel")
    func resizeChannels() throws {
        let (height, width, channels) = (2, 3, 11)
        let input = (0..<height * width * channels).map(Self.pattern)
        let out = try Self.run(
            .resizeBilinear(alignCorners: false, halfPixelCenters: true), input: [1, height, width, channels], input,
            constants: [Self.integers("size", [2], [4, 5])], output: [1, 4, 5, channels])
        var expected: [Float] = []
        for y in 0..<4 {
            let sy = (Float(y) + 0.5) * (Float(height) / 4) - 0.5
            let (top, bottom) = (max(Int(sy.rounded(.down)), 0), min(Int(sy.rounded(.up)), height - 1))
            let dy = sy - Float(top)
            for x in 0..<5 {
                let sx = (Float(x) + 0.5) * (Float(width) / 5) - 0.5
                let (left, right) = (max(Int(sx.rounded(.down)), 0), min(Int(sx.rounded(.up)), width - 1))
                let dx = sx - Float(left)
                for c in 0..<channels {
                    func value(_ row: Int, _ column: Int) -> Float { input[(row * width + column) * channels + c] }
                    expected.append(
                        value(top, left) * (1 - dy) * (1 - dx) + value(bottom, left) * dy * (1 - dx)
                            + value(top, right) * (1 - dy) * dx + value(bottom, right) * dy * dx)
                }
            }
        }
        #expect(out == expected)
    }

    @Test("two threads share RESIZE_BILINEAR by rows and ADD by blocks (an odd count): the same values as one thread")
    func resizeAndAddOnTwoThreads() throws {
        let resize = Operation.resizeBilinear(alignCorners: false, halfPixelCenters: true)
        let (side, channels) = (12, 20)
        let image = (0..<side * side * channels).map(Self.pattern)
        let size = [Self.integers("size", [2], [Int32(2 * side), Int32(2 * side)])]
        let resized = [1, 2 * side, 2 * side, channels]
        let count = 40_003
        let values = (0..<count).map(Self.pattern), other = [Self.floats("other", [1, count], (0..<count).map { Self.pattern($0 + 3) })]
        // Big enough to be shared out, so the second run really runs on two threads.
        for (operation, input, inputs, constants, output) in [
            (resize, [1, side, side, channels], image, size, resized),
            (Operation.add(.relu), [1, count], values, other, [1, count]),
        ] {
            var planner = Planner(model: Self.model(operation, input: input, constants: constants, output: output), path: "test")
            let somewhere = UnsafeMutablePointer<Float>.allocate(capacity: 1)
            defer { somewhere.deallocate() }
            let step = try planner.plan().steps[0].resolve { _ in somewhere }
            #expect(step.partCount > 1 && step.work >= Interpreter.splitWork)
            let one = try Self.run(operation, input: input, inputs, constants: constants, output: output)
            let two = try Self.run(operation, input: input, inputs, constants: constants, output: output, threads: 2)
            #expect(one == two)
        }
    }

    @Test("CONV_2D 1x1 to one channel (a classifier head) over 37 pixels of 45 channels, RELU: its own kernel agrees with the plain sum on one and two threads")
    func pointwiseToOneChannel() throws {
        let (pixels, channels) = (37, 45)
        let input = (0..<pixels * channels).map(Self.pattern)
        let filter = (0..<channels).map { Self.pattern($0 + 11) }
        let constants = [Self.floats("filter", [1, 1, 1, channels], filter), Self.floats("bias", [1], [0.25])]
        let expected = (0..<pixels).map { pixel in
            max(0, (0..<channels).reduce(Float(0.25)) { $0 + input[pixel * channels + $1] * filter[$1] })
        }
        for threads in [1, 2] {
            let out = try Self.run(
                .conv2D(Window(padding: .same, strideX: 1, strideY: 1), .relu), input: [1, pixels, 1, channels], input,
                constants: constants, output: [1, pixels, 1, 1], threads: threads)
            #expect(zip(out, expected).allSatisfy { abs($0 - $1) <= 1e-4 }, "\(threads) threads")
        }
    }

    @Test(
        "an ADD of a RESIZE_BILINEAR's output (the feature pyramid's upsampling) runs in the resize, either operand order, on one and two threads: the same values as the two apart",
        arguments: [false, true])
    func resizeThenAddFused(resizedFirst: Bool) throws {
        let (side, channels) = (12, 20)
        let resized = [1, 2 * side, 2 * side, channels]
        let image = (0..<side * side * channels).map(Self.pattern)
        let lateral = (0..<resized.reduce(1, *)).map { Self.pattern($0 + 3) }
        let resize = Operation.resizeBilinear(alignCorners: false, halfPixelCenters: true)
        let tensors = [
            TensorDescription(name: "x", shape: [1, side, side, channels], type: .float32),
            Self.integers("size", [2], [Int32(2 * side), Int32(2 * side)]),
            TensorDescription(name: "up", shape: resized, type: .float32),
            Self.floats("lateral", resized, lateral),
            TensorDescription(name: "out", shape: resized, type: .float32),
        ]
        let operators = [
            OperatorDescription(operation: resize, inputs: [0, 1], outputs: [2]),
            OperatorDescription(operation: .add(.none), inputs: resizedFirst ? [2, 3] : [3, 2], outputs: [4]),
        ]
        let model = TFLiteModel(tensors: tensors, operators: operators, inputs: [0], outputs: [4])
        var planner = Planner(model: model, path: "test")
        #expect(try planner.plan().steps.count == 1)
        let up = try Self.run(resize, input: [1, side, side, channels], image, constants: [tensors[1]], output: resized)
        let expected = zip(up, lateral).map { resizedFirst ? $0 + $1 : $1 + $0 }
        // In a file, a resize with a third input is malformed, not an ADD.
        let threeInputs = TFLiteModel(
            tensors: tensors, operators: [OperatorDescription(operation: resize, inputs: [0, 1, 3], outputs: [4])],
            inputs: [0], outputs: [4])
        #expect(throws: ModelError.self) { try Interpreter(model: threeInputs, path: "test") }
        for threads in [1, 2] {
            let interpreter = try Interpreter(model: model, path: "test", threads: threads)
            _ = interpreter.input.update(fromContentsOf: image)
            interpreter.invoke()
            #expect(Array(interpreter.output(0)) == expected, "\(threads) threads")
        }
    }

    @Test("RESIZE_BILINEAR 2x to 4x, corners not aligned, no half-pixel centres (TFLite's sampling)")
    func resize() throws {
        let size = Self.integers("size", [2], [1, 4])
        let out = try Self.run(
            .resizeBilinear(alignCorners: false, halfPixelCenters: false), input: [1, 1, 2, 1], [0, 8],
            constants: [size], output: [1, 1, 4, 1])
        // Source x = 0, 0.5, 1, 1.5 -> 0, 4, 8, 8 (clamped at the last column).
        #expect(out == [0, 4, 8, 8])
        let centred = try Self.run(
            .resizeBilinear(alignCorners: false, halfPixelCenters: true), input: [1, 1, 2, 1], [0, 8],
            constants: [size], output: [1, 1, 4, 1])
        // Source x = -0.25, 0.25, 0.75, 1.25: both neighbours of -0.25 clamp to column 0, as in TFLite.
        #expect(centred == [0, 2, 6, 8])
    }

    @Test("CONCATENATION on the last axis and RESHAPE")
    func concatenateAndReshape() throws {
        let other = Self.floats("other", [1, 2, 1], [9, 10])
        #expect(
            try Self.run(.concatenation(axis: -1, .none), input: [1, 2, 2], [1, 2, 3, 4], constants: [other], output: [1, 2, 3])
                == [1, 2, 9, 3, 4, 10])
        #expect(try Self.run(.reshape, input: [1, 2, 2], [1, 2, 3, 4], output: [4]) == [1, 2, 3, 4])
    }

    @Test("an int32 tensor where a float one is read is an error, not a read of the wrong memory")
    func integerOperand() throws {
        let error = #expect(throws: ModelError.self) {
            _ = try Self.run(.add(.none), input: [1, 2], [1, 2], constants: [Self.integers("ints", [1, 2], [3, 4])], output: [1, 2])
        }
        #expect(error?.description.contains("tensor ints is int32 where float32 is needed") == true, "\(String(describing: error))")
    }

    @Test("a shape that contradicts the operator is an error naming the tensor")
    func wrongShape() throws {
        let error = #expect(throws: ModelError.self) {
            _ = try Self.run(.relu, input: [1, 4], [1, 2, 3, 4], output: [1, 5])
        }
        #expect(error?.description.contains("tensor output should be [1, 4]") == true)
    }
}
