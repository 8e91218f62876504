import { render } from "preact";
import { App } from "./app.js";
import { connect, type FeedStatus } from "./feed.js";
import { Store } from "./model.js";
import "./app.css";

const store = new Store();
const status: FeedStatus = { live: false, connected: false, source: "", ratePerSecond: 0, framesPerSecond: 0, cursor: 0 };
const root = document.getElementById("app") as HTMLElement;
let version = 0;

function draw(): void {
  version++;
  render(<App store={store} version={version} feed={{ ...status }} />, root);
}

draw();
connect(store, status, draw).catch((err: unknown) => {
  status.source = `cannot load records: ${String(err)}`;
  draw();
});
