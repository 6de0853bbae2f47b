/// A bounds-checked reader for the parts of the FlatBuffers binary format a
/// TFLite file uses: tables with vtables, vectors of scalars, tables and
/// strings. Every offset is checked before it is followed, so a truncated or
/// corrupt file gives a `FlatBufferError`, never a crash.
struct FlatBuffer {
    let bytes: [UInt8]

    /// The root table, whose offset is the file's first four bytes.
    func root() throws(FlatBufferError) -> Table {
        try table(at: Int(try scalar(UInt32.self, at: 0)))
    }

    func scalar<T: FixedWidthInteger>(_: T.Type, at position: Int) throws(FlatBufferError) -> T {
        let size = MemoryLayout<T>.size
        guard position >= 0, position <= bytes.count - size else { throw .outOfBounds(position) }
        var value: T = 0
        for index in 0..<size { value |= T(truncatingIfNeeded: bytes[position + index]) << (8 * index) }
        return value
    }

    func table(at position: Int) throws(FlatBufferError) -> Table {
        let vtable = position - Int(try scalar(Int32.self, at: position))
        let vtableSize = Int(try scalar(UInt16.self, at: vtable))
        guard vtableSize >= 4, vtable + vtableSize <= bytes.count else { throw .outOfBounds(vtable) }
        return Table(buffer: self, position: position, vtable: vtable, vtableSize: vtableSize)
    }

    /// Follows the unsigned 32-bit offset stored at `position`.
    func indirect(_ position: Int) throws(FlatBufferError) -> Int {
        position + Int(try scalar(UInt32.self, at: position))
    }

    /// A table within the buffer: fields are found through its vtable.
    struct Table {
        let buffer: FlatBuffer
        let position: Int
        let vtable: Int
        let vtableSize: Int

        /// Where field `index` is stored, or nil when the writer left it out (its default applies).
        func fieldPosition(_ index: Int) throws(FlatBufferError) -> Int? {
            let entry = 4 + 2 * index
            guard entry + 2 <= vtableSize else { return nil }
            let offset = Int(try buffer.scalar(UInt16.self, at: vtable + entry))
            return offset == 0 ? nil : position + offset
        }

        func scalar<T: FixedWidthInteger>(_ index: Int, default value: T = 0) throws(FlatBufferError) -> T {
            guard let field = try fieldPosition(index) else { return value }
            return try buffer.scalar(T.self, at: field)
        }

        func table(_ index: Int) throws(FlatBufferError) -> Table? {
            guard let field = try fieldPosition(index) else { return nil }
            return try buffer.table(at: try buffer.indirect(field))
        }

        /// The element count and the position of the first element of vector field `index`.
        func vector(_ index: Int, elementSize: Int) throws(FlatBufferError) -> (count: Int, start: Int)? {
            guard let field = try fieldPosition(index) else { return nil }
            let start = try buffer.indirect(field)
            let count = Int(try buffer.scalar(UInt32.self, at: start))
            guard count <= (buffer.bytes.count - start - 4) / max(elementSize, 1) else { throw .outOfBounds(start) }
            return (count, start + 4)
        }

        func scalars<T: FixedWidthInteger>(_ index: Int, as type: T.Type) throws(FlatBufferError) -> [T] {
            guard let (count, start) = try vector(index, elementSize: MemoryLayout<T>.size) else { return [] }
            var values: [T] = []
            values.reserveCapacity(count)
            for element in 0..<count { values.append(try buffer.scalar(T.self, at: start + element * MemoryLayout<T>.size)) }
            return values
        }

        func tables(_ index: Int) throws(FlatBufferError) -> [Table] {
            guard let (count, start) = try vector(index, elementSize: 4) else { return [] }
            var tables: [Table] = []
            for element in 0..<count { tables.append(try buffer.table(at: try buffer.indirect(start + 4 * element))) }
            return tables
        }

        func string(_ index: Int) throws(FlatBufferError) -> String? {
            guard let (count, start) = try vector(index, elementSize: 1) else { return nil }
            return String(decoding: buffer.bytes[start..<start + count], as: UTF8.self)
        }

        /// The byte range of a `[ubyte]` vector field.
        func byteRange(_ index: Int) throws(FlatBufferError) -> Range<Int>? {
            guard let (count, start) = try vector(index, elementSize: 1) else { return nil }
            return start..<start + count
        }
    }
}

enum FlatBufferError: Error {
    case outOfBounds(Int)
}
