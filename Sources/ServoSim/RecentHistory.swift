/// The newest `capacity` (to twice that) of what was appended, and how many
/// were appended in all: what a long run keeps of a history it only reports
/// on. Memory stays below twice the capacity however long it runs; a short
/// run (a test) keeps everything.
struct RecentHistory<Element> {
    let capacity: Int
    private(set) var elements: [Element] = []
    /// Everything ever appended, kept or not.
    private(set) var totalCount = 0

    init(capacity: Int) { self.capacity = capacity }

    var last: Element? { elements.last }

    mutating func append(_ element: Element) {
        // Dropping the oldest half at a time keeps appending amortised O(1).
        if elements.count >= 2 * capacity { elements.removeFirst(elements.count - capacity) }
        elements.append(element)
        totalCount += 1
    }
}
