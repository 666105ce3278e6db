// topoSort({ a: ["b"], b: [] }) -> ["b", "a"]: every node after its dependencies. A cycle throws
// Error("cycle: a -> b -> a") naming the nodes of the cycle in order.
export function topoSort(graph) {
  const order = [];
  const done = new Set();
  const path = [];
  const visit = (node) => {
    if (done.has(node)) return;
    const at = path.indexOf(node);
    if (at !== -1) throw new Error(`cycle: ${[...path.slice(at), node].join(" -> ")}`);
    path.push(node);
    for (const dep of graph[node] ?? []) visit(dep);
    path.pop();
    done.add(node);
    order.push(node);
  };
  for (const node of Object.keys(graph).sort()) visit(node);
  return order;
}
