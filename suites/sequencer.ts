import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Runs the cluster specs in file-name order: the lab's steps build on each other (01-iptables … 12-vxlan). */
export class FileNameSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId));
  }
}
