import { collect, paginate, type Page } from "pulumi-gpucloud/sdk";

function pages(all: number[], pageSizeSeen: number[] = []) {
  return async (page: number, pageSize: number): Promise<Page<number>> => {
    pageSizeSeen.push(page);
    return { items: all.slice((page - 1) * pageSize, page * pageSize), total: all.length };
  };
}

describe("paginate", () => {
  it("walks every page until total is reached", async () => {
    const seen: number[] = [];
    const all = Array.from({ length: 25 }, (_, i) => i);
    expect(await collect(paginate(pages(all, seen), { pageSize: 10 }))).toEqual(all);
    expect(seen).toEqual([1, 2, 3]);
  });

  it("stops at total without asking for an empty page", async () => {
    const seen: number[] = [];
    await collect(
      paginate(
        pages(
          Array.from({ length: 20 }, (_, i) => i),
          seen,
        ),
        { pageSize: 10 },
      ),
    );
    expect(seen).toEqual([1, 2]);
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
    const all = Array.from({ length: 7 }, (_, i) => i);
    const capped = async (page: number): Promise<Page<number>> => ({
      items: all.slice((page - 1) * 3, page * 3),
      total: all.length,
    });
    expect(await collect(paginate(capped, { pageSize: 100 }))).toEqual(all);
  });

  it("stops on an empty page even when total promised more", async () => {
    const items = await collect(
      paginate(async (page) => ({ items: page === 1 ? [1] : [], total: 5 }), { pageSize: 1 }),
    );
    expect(items).toEqual([1]);
  });

  it("does not loop forever on a server that ignores page", async () => {
    let calls = 0;
    const items = await collect(
      paginate(
        async () => {
          calls++;
          return { items: [1, 2] };
        },
        { pageSize: 2, maxPages: 5 },
      ),
    );
    expect(calls).toBe(5);
    expect(items).toHaveLength(10);
  });
});
