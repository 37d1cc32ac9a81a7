import { collect, nextPageSize, paginate, UnendingListError, walkEnds, type Page } from "pulumi-gpucloud/sdk";

function pages(all: number[], pageSizeSeen: number[] = [], hiddenInTotal = 0) {
  return async (page: number, pageSize: number): Promise<Page<number>> => {
    pageSizeSeen.push(page);
    return { items: all.slice((page - 1) * pageSize, page * pageSize), total: all.length + hiddenInTotal };
  };
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("paginate", () => {
  it("walks every page and ends on the short page that reaches the total", async () => {
    const seen: number[] = [];
    expect(await collect(paginate(pages(upTo(25), seen), { pageSize: 10 }))).toEqual(upTo(25));
    expect(seen).toEqual([1, 2, 3]);
  });

  it("never ends on a full page, whatever the total says: one that lags behind the list loses nothing", async () => {
    const all = upTo(30);
    const lagging = async (page: number): Promise<Page<number>> => ({
      items: all.slice((page - 1) * 10, page * 10),
      total: 20,
    });
    expect(await collect(paginate(lagging, { pageSize: 10 }))).toEqual(all);
  });

  it("asks for one more page after a full last page, and ends on the empty one", async () => {
    const seen: number[] = [];
    await collect(paginate(pages(upTo(20), seen), { pageSize: 10 }));
    expect(seen).toEqual([1, 2, 3]);
  });

  it("ends on an empty page when the total counts an item the list never shows", async () => {
    const seen: number[] = [];
    expect(await collect(paginate(pages(upTo(25), seen, 1), { pageSize: 10 }))).toEqual(upTo(25));
    expect(seen).toEqual([1, 2, 3, 4]);
  });

  it("stops on an empty or short page when no total is given", async () => {
    const calls: number[] = [];
    const items = await collect(
      paginate(
        async (page) => {
          calls.push(page);
          return { items: page === 1 ? [1, 2] : [] };
        },
        { pageSize: 2 },
      ),
    );
    expect(items).toEqual([1, 2]);
    expect(calls).toEqual([1, 2]);
  });

  it("keeps walking a server that serves fewer items per page than asked, up to total", async () => {
    const all = upTo(7);
    const capped = async (page: number): Promise<Page<number>> => ({
      items: all.slice((page - 1) * 3, page * 3),
      total: all.length,
    });
    expect(await collect(paginate(capped, { pageSize: 100 }))).toEqual(all);
  });

  it("goes on in the server's own page size when it serves fewer than asked and offsets by what was asked", async () => {
    const all = upTo(7);
    const asked: number[] = [];
    const capsAtThree = async (page: number, pageSize: number): Promise<Page<number>> => {
      asked.push(pageSize);
      const from = (page - 1) * pageSize;
      return { items: all.slice(from, from + Math.min(pageSize, 3)), total: all.length };
    };
    expect(await collect(paginate(capsAtThree, { pageSize: 100 }))).toEqual(all);
    expect(asked).toEqual([100, 3, 3]);
  });

  it("stops on an empty page even when total promised more", async () => {
    const items = await collect(
      paginate(async (page) => ({ items: page === 1 ? [1] : [], total: 5 }), { pageSize: 1 }),
    );
    expect(items).toEqual([1]);
  });

  it("fails at the page bound on a server that answers every page full, naming the list and the bound", async () => {
    let calls = 0;
    const walk = collect(
      paginate(
        async () => {
          calls++;
          return { items: [1, 2], total: 2 };
        },
        { pageSize: 2, maxPages: 5 },
        { action: "list pods", method: "GET", path: "/pod/list" },
      ),
    );
    const err = await walk.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UnendingListError);
    expect((err as UnendingListError).pages).toBe(5);
    expect((err as Error).message).toContain(
      "Could not list pods: the list did not end within 5 pages of 2 (GET /pod/list)",
    );
    expect((err as Error).message).toContain("raise maxPages");
    expect(calls).toBe(5);
  });
});

describe("walkEnds and nextPageSize", () => {
  it.each([
    ["an empty page", { page: 4, items: 0, pageSize: 10, collected: 30, total: 50 }, true, 10],
    ["a full page, total reached", { page: 2, items: 10, pageSize: 10, collected: 20, total: 20 }, false, 10],
    ["a full page, total passed", { page: 3, items: 10, pageSize: 10, collected: 30, total: 20 }, false, 10],
    [
      "a short page reaching the total",
      { page: 3, items: 5, pageSize: 10, collected: 25, total: 25 },
      true,
      10,
    ],
    [
      "a short page short of the total",
      { page: 3, items: 5, pageSize: 10, collected: 25, total: 26 },
      false,
      10,
    ],
    [
      "a short first page short of the total",
      { page: 1, items: 4, pageSize: 10, collected: 4, total: 9 },
      false,
      4,
    ],
    ["a short page without a total", { page: 3, items: 5, pageSize: 10, collected: 25 }, true, 10],
  ])("%s: ends %s, next page size %s", (_name, page, ends, next) => {
    expect(walkEnds(page)).toBe(ends);
    expect(nextPageSize(page)).toBe(next);
  });
});
