'use client';

import { Suspense } from 'react';
import { ReactFlowProvider } from '@xyflow/react';
import { Editor } from './editor';

export default function EditorPage() {
  return (
    <ReactFlowProvider>
      <Suspense>
        <Editor />
      </Suspense>
    </ReactFlowProvider>
  );
}
