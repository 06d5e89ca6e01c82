import { describe, expect, it } from 'vitest';
import { buildGraphIndex, dependentsMap, downstreamClosure, graphIndexOf, layers, roots, topoOrder } from '../src/dag/graph';
import { parseDagSpec } from '../src/dag/validate';

const diamond = parseDagSpec({
  id: 'diamond',
  tasks: [
    { id: 'a', type: 'noop' },
    { id: 'b', type: 'noop', dependsOn: ['a'] },
    { id: 'c', type: 'noop', dependsOn: ['a'] },
    { id: 'd', type: 'noop', dependsOn: ['b', 'c'] },
    { id: 'e', type: 'noop' },
  ],
});

describe('graph', () => {
  it("indexes a spec once per spec object, with each task's place in the spec", () => {
    const g = graphIndexOf(diamond);
    expect(graphIndexOf(diamond)).toBe(g);
    expect(g).toEqual(buildGraphIndex(diamond));
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect(diamond.tasks[g.positions[g.indexOf.get(id)!]!]!.id).toBe(id);
    // A raw spec with a duplicate id keeps the first occurrence, and its place.
    const raw = {
      tasks: [
        { id: 'x', dependsOn: [] },
        { id: 'y', dependsOn: ['x'] },
        { id: 'x', dependsOn: ['y'] },
      ],
    };
    const r = graphIndexOf(raw);
    expect(r.ids).toEqual(['x', 'y']);
    expect(r.positions).toEqual([0, 1]);
    // Another object with the same content is indexed on its own.
    expect(graphIndexOf({ ...diamond })).not.toBe(g);
  });

  it('finds the roots in spec order', () => {
    expect(roots(diamond)).toEqual(['a', 'e']);
  });

  it('maps every task to its direct dependents', () => {
    expect(Object.fromEntries(dependentsMap(diamond))).toEqual({ a: ['b', 'c'], b: ['d'], c: ['d'], d: [], e: [] });
  });

  it('lists the transitive dependents of a task, nearest first', () => {
    expect(downstreamClosure(diamond, 'a')).toEqual(['b', 'c', 'd']);
    expect(downstreamClosure(diamond, 'c')).toEqual(['d']);
    expect(downstreamClosure(diamond, 'd')).toEqual([]);
    expect(() => downstreamClosure(diamond, 'zz')).toThrow(/not a task/);
  });

  it('orders tasks after their dependencies', () => {
    const order = topoOrder(diamond);
    expect(order).toEqual(['a', 'e', 'b', 'c', 'd']);
  });

  it('layers tasks by their longest path from a root', () => {
    expect(layers(diamond)).toEqual([['a', 'e'], ['b', 'c'], ['d']]);
  });

  it('refuses to order a cycle', () => {
    const cyclic = {
      tasks: [
        { id: 'a', dependsOn: ['b'] },
        { id: 'b', dependsOn: ['a'] },
      ],
    };
    expect(() => topoOrder(cyclic)).toThrow(/cycle/);
  });

  it('handles a 20,000-task chain without recursion', () => {
    const tasks = Array.from({ length: 20_000 }, (_, i) => ({ id: `t${i}`, dependsOn: i === 0 ? [] : [`t${i - 1}`] }));
    expect(downstreamClosure({ tasks }, 't0')).toHaveLength(19_999);
    expect(layers({ tasks })).toHaveLength(20_000);
  });
});
