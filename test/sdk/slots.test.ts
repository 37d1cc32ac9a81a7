import { Slots } from "../../sdk/slots";
import { settle } from "./fake-clock";

describe("connection slots", () => {
  it("hands out as many slots as there are, then gives freed ones to the longest waiter first", async () => {
    const slots = new Slots(2);
    const first = await slots.acquire();
    await slots.acquire();
    const order: string[] = [];
    const a = slots.acquire().then((release) => (order.push("a"), release));
    const b = slots.acquire().then((release) => (order.push("b"), release));
    await settle();
    expect(order).toEqual([]);
    first();
    first();
    await settle();
    expect(order).toEqual(["a"]);
    (await a)();
    await b;
    expect(order).toEqual(["a", "b"]);
  });

  it("drops a waiter that aborts, so its turn goes to the next", async () => {
    const slots = new Slots(1);
    const only = await slots.acquire();
    const controller = new AbortController();
    const leaving = slots.acquire(controller.signal);
    const staying = slots.acquire();
    controller.abort(new Error("gave up"));
    await expect(leaving).rejects.toThrow("gave up");
    only();
    await expect(staying).resolves.toEqual(expect.any(Function));
  });
});
