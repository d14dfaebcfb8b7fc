// Every view the dashboard can show, by the name of its Python class (the dashboard's
// `views` list says which kind each tab is).
import { type Model, type ViewContext } from "./model";
import { render as overview } from "./overview";
import { render as timeline } from "./timeline";
import { render as opstats } from "./opstats";
import { render as kernels } from "./kernels";
import { render as memory } from "./memory";
import { render as input } from "./input";
import { render as pipelinegraph } from "./pipelinegraph";
import { render as podview } from "./podview";
import { render as stepgraph } from "./stepgraph";
import { render as xla } from "./xla";

export type Render = (args: { model: Model; el: HTMLElement; ctx?: ViewContext }) => (() => void) | void;

export const VIEWS: Record<string, Render> = {
  OverviewView: overview,
  TraceTimeline: timeline,
  OpStatsView: opstats,
  KernelStatsView: kernels,
  MemoryTimeline: memory,
  InputPipelineView: input,
  PipelineGraph: pipelinegraph,
  PodView: podview,
  StepTimeGraph: stepgraph,
  XlaView: xla,
};
